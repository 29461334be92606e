import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createMetrics } from '../../lib/metrics.ts';
import { createRestTransport } from '../kit/transport.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import type { RecognitionConfig } from './config.ts';
import { makeContext, type RecognitionContext } from './context.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/recognition.graphql', import.meta.url), 'utf8'));

/** The recognition subgraph, built but not listening: `main.ts` and the tests start it. */
export function createRecognitionSubgraph(config: RecognitionConfig, logger: Logger): SubgraphDefinition<RecognitionContext> {
  const metrics = createMetrics('recognition');
  const transport = createRestTransport({
    service: 'recognition',
    baseUrl: `${config.apiUrl}/api/v1`,
    timeoutMs: config.timeoutMs,
    logger,
    observe: ({ operation, status, durationMs }) => {
      metrics.upstreamCalls.inc({ service: 'recognition', operation, status: String(status) });
      metrics.upstreamSeconds.observe({ service: 'recognition', operation }, durationMs / 1000);
    },
  });
  return {
    name: 'recognition',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<RecognitionContext>,
    context: (headers) => makeContext(transport, headers),
    metrics,
    logger,
    dispose: () => transport.close(),
  };
}
