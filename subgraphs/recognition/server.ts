import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { Gauge } from 'prom-client';
import { createServiceUpstream } from '../kit/upstream.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import type { EventLog } from '../kit/events/eventLog.ts';
import { createMemoryLog } from '../kit/events/memoryLog.ts';
import { createRedisLog } from '../kit/events/redisLog.ts';
import { createCredentialChecks } from '../kit/credentialChecks.ts';
import { createWebhookReceiver } from '../kit/events/webhookReceiver.ts';
import { attachSubscriptionServer } from '../kit/events/wsServer.ts';
import type { RecognitionConfig } from './config.ts';
import { makeContext, type RecognitionContext } from './context.ts';
import { createRecognitionClient } from './client.ts';
import { WEBHOOK_PATH, parseRecognitionDelivery } from './events.ts';
import { ensureWebhook } from './registration.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/recognition.graphql', import.meta.url), 'utf8'));

/** The recognition subgraph, built but not listening: `main.ts` and the tests start it. */
export async function createRecognitionSubgraph(config: RecognitionConfig, logger: Logger): Promise<SubgraphDefinition<RecognitionContext>> {
  const { metrics, transport } = createServiceUpstream({ service: 'recognition', baseUrl: `${config.apiUrl}/api/v1`, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, circuitBreaker: config.circuitBreaker });
  const events: EventLog = config.redisUrl
    ? await createRedisLog({ url: config.redisUrl, prefix: 'graph:recognition', maxLength: config.eventLogSize, maxBytes: config.eventLogMaxBytes, logger })
    : createMemoryLog({ capacity: config.eventLogSize, maxBytes: config.eventLogMaxBytes });
  const dependencies = { transport, events, credentialChecks: createCredentialChecks({ ttlMs: config.credentialCheckTtlMs }) };
  new Gauge({
    name: 'recognition_event_subscriptions',
    help: 'Subscriptions following the event log in this process',
    registers: [metrics.registry],
    collect() {
      this.set(events.listeners());
    },
  });

  return {
    name: 'recognition',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<RecognitionContext>,
    context: (headers, scope) => makeContext(dependencies, headers, scope),
    maxRequestUpstreamCalls: config.maxRequestUpstreamCalls,
    metrics,
    logger,
    routes: createWebhookReceiver({
      path: WEBHOOK_PATH,
      secret: config.webhookSecret,
      log: events,
      maxBytes: config.webhookMaxBytes,
      parse: parseRecognitionDelivery,
      logger,
    }),
    attach: (server, schema, limits) => attachSubscriptionServer({ server, schema, limits, logger, service: 'recognition', context: (params) => makeContext(dependencies, params) }),
    async afterListen(url) {
      if (!config.publicUrl || !config.serviceToken) return;
      const client = createRecognitionClient({ transport, token: config.serviceToken });
      try {
        await ensureWebhook({ client, publicUrl: config.publicUrl === 'self' ? url : config.publicUrl, secret: config.webhookSecret, logger });
      } catch (error) {
        // Queries still work without events: say why, and keep serving.
        logger.error({ code: (error as { extensions?: { code?: string } }).extensions?.code, message: (error as Error).message }, 'could not register the recognition webhook');
      }
    },
    async dispose() {
      await events.close();
      await transport.close();
    },
  };
}
