import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { composeServices } from '@apollo/composition';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { createMetrics } from '../../lib/metrics.ts';
import { testLogger } from './logs.ts';

/**
 * A test-only subgraph that extends the recognition `Bonus` entity with a field of its own, to
 * prove that subscription events are completed by other subgraphs.
 */
export const KUDOS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Bonus @key(fields: "id") {
    id: ID!
    celebration: String!
  }
`;

/** `lookupMs`: how long each lookup takes, so that a test can hold events in the gateway while they execute. */
export async function startKudosSubgraph({ lookupMs = 0 }: { lookupMs?: number } = {}) {
  const lookups: string[] = [];
  const started = await startSubgraph(
    {
      name: 'kudos',
      // It calls no upstream: the budget is never reached.
      maxRequestUpstreamCalls: 1000,
      typeDefs: parse(KUDOS_SDL),
      resolvers: {
        Bonus: {
          __resolveReference: async (reference: { id: string }) => {
            lookups.push(reference.id);
            if (lookupMs > 0) await new Promise((resolve) => setTimeout(resolve, lookupMs));
            return { id: reference.id, celebration: `Party for ${reference.id}` };
          },
        },
      },
      context: () => ({}),
      metrics: createMetrics('kudos'),
      logger: testLogger('kudos'),
    },
    { port: 0 },
  );
  return { ...started, graphqlUrl: `${started.url}/graphql`, lookups };
}

/** The supergraph of recognition plus kudos. */
export function composeWithKudos(recognitionUrl: string, kudosUrl: string): string {
  const result = composeServices([
    { name: 'recognition', url: recognitionUrl, typeDefs: parse(readFileSync(new URL('../../schema/recognition.graphql', import.meta.url), 'utf8')) },
    { name: 'kudos', url: kudosUrl, typeDefs: parse(KUDOS_SDL) },
  ]);
  if (result.errors) throw new Error(result.errors.map((error) => error.message).join('\n'));
  return result.supergraphSdl;
}
