import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { Gauge } from 'prom-client';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createServiceUpstream } from '../kit/upstream.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import type { StatsDto } from './client.ts';
import type { DashboardsConfig } from './config.ts';
import { makeContext, type DashboardsContext } from './context.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/dashboards.graphql', import.meta.url), 'utf8'));

/** The dashboards subgraph, built but not listening: `main.ts` and the tests start it. */
export function createDashboardsSubgraph(config: DashboardsConfig, logger: Logger): SubgraphDefinition<DashboardsContext> {
  const { metrics, transport } = createServiceUpstream({ service: 'dashboards', baseUrl: config.apiUrl, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, circuitBreaker: config.circuitBreaker });
  // Labelled so that no series shows before the service has reported a quota: an unlabelled gauge would read 0.
  const quotaRemaining = new Gauge({
    name: 'dashboards_quota_remaining',
    help: 'Requests left in the account quota, as the service last reported in its stats (the token is never a label)',
    labelNames: ['service'] as const,
    registers: [metrics.registry],
  });
  const quotaBase = new Gauge({
    name: 'dashboards_quota_base',
    help: 'The account quota of a period, as the service last reported in its stats',
    labelNames: ['service'] as const,
    registers: [metrics.registry],
  });
  const onStats = (stats: StatsDto) => {
    if (stats.quotaRemaining !== null) quotaRemaining.set({ service: 'dashboards' }, stats.quotaRemaining);
    if (stats.quotaBase !== null) quotaBase.set({ service: 'dashboards' }, stats.quotaBase);
  };

  return {
    name: 'dashboards',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<DashboardsContext>,
    context: (headers, scope) => makeContext({ transport, onStats }, headers, scope),
    maxRequestUpstreamCalls: config.maxRequestUpstreamCalls,
    metrics,
    logger,
    dispose: () => transport.close(),
  };
}
