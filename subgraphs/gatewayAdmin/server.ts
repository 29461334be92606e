import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createServiceUpstream } from '../kit/upstream.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import { adminTokenProof } from './authorization.ts';
import type { GatewayAdminConfig } from './config.ts';
import { makeContext, type GatewayAdminContext } from './context.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/gatewayAdmin.graphql', import.meta.url), 'utf8'));

/** The gatewayAdmin subgraph, built but not listening: `main.ts` and the tests start it. */
export function createGatewayAdminSubgraph(config: GatewayAdminConfig, logger: Logger): SubgraphDefinition<GatewayAdminContext> {
  const { metrics, transport } = createServiceUpstream({ service: 'gatewayAdmin', baseUrl: config.apiUrl, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, circuitBreaker: config.circuitBreaker });
  const dependencies = { transport, proofs: [adminTokenProof(config.adminToken)], proxyUrl: config.proxyUrl };
  return {
    name: 'gatewayAdmin',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<GatewayAdminContext>,
    context: (headers, scope) => makeContext(dependencies, headers, scope),
    maxRequestUpstreamCalls: config.maxRequestUpstreamCalls,
    metrics,
    logger,
    dispose: () => transport.close(),
  };
}
