import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { Gauge } from 'prom-client';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createServiceUpstream } from '../kit/upstream.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import { SYSTEM_CLOCK, type DeadlineClock } from '../../lib/deadlines.ts';
import { attachSubscriptionServer } from '../kit/events/wsServer.ts';
import { API_VERSION_PATH, createImportsClient } from './client.ts';
import type { ImportsConfig } from './config.ts';
import { makeContext, type ImportsContext } from './context.ts';
import { createStatusPoller, type PollerStats } from './poller.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/imports.graphql', import.meta.url), 'utf8'));

export interface ImportsSubgraphOptions {
  /** The clock the status poller waits by; tests move it. @default the system clock */
  clock?: DeadlineClock;
}

/** The imports subgraph, built but not listening: `main.ts` and the tests start it. */
export async function createImportsSubgraph(config: ImportsConfig, logger: Logger, { clock = SYSTEM_CLOCK }: ImportsSubgraphOptions = {}): Promise<SubgraphDefinition<ImportsContext>> {
  const baseUrl = `${config.apiUrl}${API_VERSION_PATH}`;
  const { metrics, transport } = createServiceUpstream({ service: 'imports', baseUrl, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, circuitBreaker: config.circuitBreaker });
  // Loaded only with Redis: a single process never needs the client.
  const coordinator = config.redisUrl ? await (await import('./leases.ts')).createRedisLeases({ url: config.redisUrl, prefix: 'graph:imports', leaseMs: config.leaseMs, logger }) : undefined;
  const poller = createStatusPoller({
    fetchStatus: (id, apikey) => createImportsClient({ transport, baseUrl, apikey, logger }).getImport(id),
    clock,
    backoff: { initialMs: config.pollInitialMs, maxMs: config.pollMaxMs },
    ...(coordinator ? { coordinator } : {}),
    logger,
  });
  const dependencies = { transport, baseUrl, poller, logger };
  const gauges: [name: string, help: string, read: (stats: PollerStats) => number][] = [
    ['imports_status_watches', 'Imports whose status this process follows for subscribers (one poller each at most)', (stats) => stats.watches],
    ['imports_status_subscriptions', 'Subscriptions to import status changes in this process', (stats) => stats.subscribers],
    ['imports_status_polls', 'Polls of import statuses this process made since start (with Redis, only the lease holder polls an import)', (stats) => stats.polls],
    ['imports_status_ticks', 'Poller wake-ups since start: a poll, or a try for a lease another replica holds', (stats) => stats.ticks],
  ];
  for (const [name, help, read] of gauges) {
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(read(poller.stats()));
      },
    });
  }

  return {
    name: 'imports',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<ImportsContext>,
    context: (headers, scope) => makeContext(dependencies, headers, scope),
    maxRequestUpstreamCalls: config.maxRequestUpstreamCalls,
    metrics,
    logger,
    attach: (server, schema, limits) => attachSubscriptionServer({ server, schema, limits, logger, service: 'imports', context: (params) => makeContext(dependencies, params) }),
    async dispose() {
      await poller.close();
      await transport.close();
    },
  };
}
