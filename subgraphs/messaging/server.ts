import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { Gauge } from 'prom-client';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createServiceUpstream } from '../kit/upstream.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import type { EventLog } from '../kit/events/eventLog.ts';
import { createMemoryLog } from '../kit/events/memoryLog.ts';
import { createRedisLog } from '../kit/events/redisLog.ts';
import { createWebhookReceiver } from '../kit/events/webhookReceiver.ts';
import { createCredentialChecks } from '../kit/credentialChecks.ts';
import { decodeDeliveryBody } from '../kit/events/deliveryBodies.ts';
import { attachSubscriptionServer } from '../kit/events/wsServer.ts';
import type { MessagingConfig } from './config.ts';
import { makeContext, type MessagingContext } from './context.ts';
import { INBOUND_PATH, STATUS_PATH, parseInboundCallback, parseStatusCallback } from './events.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/messaging.graphql', import.meta.url), 'utf8'));

/** The callback addresses to enter in a store's settings, secret included: for operators, never for logs. */
export function callbackUrls(subgraphUrl: string, secret: string): { inboundCallbackURL: string; messageStatusURL: string } {
  return { inboundCallbackURL: `${subgraphUrl}${INBOUND_PATH}/${secret}`, messageStatusURL: `${subgraphUrl}${STATUS_PATH}/${secret}` };
}

/** The messaging subgraph, built but not listening: `main.ts` and the tests start it. */
export async function createMessagingSubgraph(config: MessagingConfig, logger: Logger): Promise<SubgraphDefinition<MessagingContext>> {
  const { metrics, transport } = createServiceUpstream({ service: 'messaging', baseUrl: config.apiUrl, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, pacing: config.pacing, circuitBreaker: config.circuitBreaker, redisUrl: config.redisUrl });
  const events: EventLog = config.redisUrl
    ? await createRedisLog({ url: config.redisUrl, prefix: 'graph:messaging', maxLength: config.eventLogSize, logger })
    : createMemoryLog({ capacity: config.eventLogSize });
  const dependencies = { transport, events, credentialChecks: createCredentialChecks({ ttlMs: config.credentialCheckTtlMs }) };
  new Gauge({
    name: 'messaging_event_subscriptions',
    help: 'Subscriptions following the event log in this process',
    registers: [metrics.registry],
    collect() {
      this.set(events.listeners());
    },
  });
  const receiver = (path: string, parseDelivery: typeof parseInboundCallback) =>
    createWebhookReceiver({ path, secret: config.callbackSecret, log: events, maxBytes: config.callbackMaxBytes, parse: parseDelivery, decode: decodeDeliveryBody, logger });

  return {
    name: 'messaging',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<MessagingContext>,
    context: (headers, scope) => makeContext(dependencies, headers, scope),
    maxRequestUpstreamCalls: config.maxRequestUpstreamCalls,
    metrics,
    logger,
    routes: [...receiver(INBOUND_PATH, parseInboundCallback), ...receiver(STATUS_PATH, parseStatusCallback)],
    attach: (server, schema, limits) => attachSubscriptionServer({ server, schema, limits, logger, service: 'messaging', context: (params) => makeContext(dependencies, params) }),
    async dispose() {
      await events.close();
      await transport.close();
    },
  };
}
