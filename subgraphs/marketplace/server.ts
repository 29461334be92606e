import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createServiceUpstream } from '../kit/upstream.ts';
import { createDownloadStore, downloadRoute } from '../kit/downloads.ts';
import { makeCursorSigner } from '../kit/cursors.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import type { MarketplaceConfig } from './config.ts';
import { clientFor, makeContext, type LabelsPdfDownload, type MarketplaceContext } from './context.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/marketplace.graphql', import.meta.url), 'utf8'));

export interface MarketplaceSubgraphOptions {
  /** The clock download links expire by. @default Date.now */
  now?: () => number;
}

/** The marketplace subgraph, built but not listening: `main.ts` and the tests start it. */
export function createMarketplaceSubgraph(config: MarketplaceConfig, logger: Logger, { now }: MarketplaceSubgraphOptions = {}): SubgraphDefinition<MarketplaceContext> {
  const { metrics, transport } = createServiceUpstream({ service: 'marketplace', baseUrl: config.apiUrl, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, pacing: config.pacing });
  const downloads = createDownloadStore<LabelsPdfDownload>({ ttlMs: config.downloadTtlMs, ...(now ? { now } : {}) });
  const dependencies = { transport, config, downloads, cursors: makeCursorSigner(config.cursorSecret) };
  return {
    name: 'marketplace',
    typeDefs,
    resolvers: resolvers as GraphQLResolverMap<MarketplaceContext>,
    context: (headers, scope) => makeContext(dependencies, headers, scope),
    maxRequestUpstreamCalls: config.maxRequestUpstreamCalls,
    metrics,
    logger,
    routes: [
      downloadRoute(
        downloads,
        async ({ plpId, credential }) => {
          const response = await clientFor(dependencies, credential).streamLabelsPdf(plpId);
          return { contentType: response.headers['content-type'] ?? 'application/pdf', filename: `plp-${plpId}.pdf`, body: response.body, contentLength: response.headers['content-length'] };
        },
        logger,
      ),
    ],
    dispose: () => transport.close(),
  };
}
