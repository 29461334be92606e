import type { Fetcher } from '@apollo/utils.fetcher';

export interface Readiness {
  ready: boolean;
  supergraphLoaded: boolean;
  subgraphs: Record<string, 'up' | 'down'>;
}

/** Ready means: the supergraph is loaded and every subgraph answers a trivial query. */
export async function checkReadiness(fetcher: Fetcher, supergraphLoaded: boolean, subgraphUrls: Record<string, string>): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(subgraphUrls).map(async ([name, url]) => {
      try {
        const response = await fetcher(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ __typename }' }),
          signal: AbortSignal.timeout(2000),
        });
        return [name, response.ok ? 'up' : 'down'] as const;
      } catch {
        return [name, 'down'] as const;
      }
    }),
  );
  const subgraphs = Object.fromEntries(entries);
  return { ready: supergraphLoaded && entries.every(([, state]) => state === 'up'), supergraphLoaded, subgraphs };
}
