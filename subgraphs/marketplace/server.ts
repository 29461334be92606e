import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { Logger } from '../../lib/logger.ts';
import { createServiceUpstream } from '../kit/upstream.ts';
import { createDownloadStore, downloadRoute, type DownloadStore } from '../kit/downloads.ts';
import { createRedisDownloadStore } from '../kit/redisDownloads.ts';
import { makeCursorSigner } from '../kit/cursors.ts';
import type { SubgraphDefinition } from '../kit/server.ts';
import type { MarketplaceConfig } from './config.ts';
import { clientFor, linkOwnerOf, makeContext, readLabelsPdfDownload, type LabelsPdfDownload, type MarketplaceContext } from './context.ts';
import { resolvers } from './resolvers/index.ts';

const typeDefs = parse(readFileSync(new URL('../../schema/marketplace.graphql', import.meta.url), 'utf8'));

export interface MarketplaceSubgraphOptions {
  /** The clock download links expire by. @default Date.now */
  now?: () => number;
}

/** The marketplace subgraph, built but not listening: `main.ts` and the tests start it. */
export function createMarketplaceSubgraph(config: MarketplaceConfig, logger: Logger, { now }: MarketplaceSubgraphOptions = {}): SubgraphDefinition<MarketplaceContext> {
  const { metrics, transport } = createServiceUpstream({ service: 'marketplace', baseUrl: config.apiUrl, timeoutMs: config.timeoutMs, logger, ...config.upstreamLimits, pacing: config.pacing, circuitBreaker: config.circuitBreaker, redisUrl: config.redisUrl });
  const clock = now ? { now } : {};
  // With Redis, any replica serves a link another replica made, under the same bounds per owner.
  const downloads: DownloadStore<LabelsPdfDownload> = config.redisUrl
    ? createRedisDownloadStore({ url: config.redisUrl, prefix: 'graph:marketplace', ttlMs: config.downloadTtlMs, read: readLabelsPdfDownload, ownerOf: linkOwnerOf, service: 'marketplace', logger, ...clock })
    : createDownloadStore<LabelsPdfDownload>({ ttlMs: config.downloadTtlMs, ownerOf: linkOwnerOf, ...clock });
  const cursors = makeCursorSigner(config.cursorSecret, {
    onForeignKey: () => logger.warn('a list cursor signed under another CURSOR_SECRET arrived: every replica must share one CURSOR_SECRET (the caller was told to start the list again)'),
  });
  const dependencies = { transport, config, downloads, cursors };
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
    dispose: async () => {
      await transport.close();
      await downloads.close();
    },
  };
}
