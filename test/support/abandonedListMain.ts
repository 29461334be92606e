import { parse } from 'graphql';
import { runMain } from '../../lib/config.ts';
import { graphError, ErrorCode } from '../../lib/errors.ts';
import { createLogger } from '../../lib/logger.ts';
import { createMetrics } from '../../lib/metrics.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';

/**
 * A subgraph main (`runMain`, the kit's server) whose mutation `makeItems` answers the shape
 * graphql-js 16 leaves a promise unawaited with: a list of non-null items, the first still waiting
 * on a call that then fails, the second failing at once (`lib/abandonedFieldErrors.ts`). Mutations
 * run on graphql-js; queries are compiled by graphql-jit, which awaits every item. `bug` leaves a
 * rejection of its own unhandled, as a bug of ours would. Prints its URL once listening.
 */
const SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Query {
    bug: String
  }
  type Mutation {
    makeItems: [Item!]!
  }
  type Item {
    id: ID!
  }
`;

const failingLate = () => new Promise((_resolve, reject) => setTimeout(() => reject(graphError('the service failed late', { code: ErrorCode.UpstreamError })), 20));

runMain(async () => {
  const started = await startSubgraph(
    {
      name: 'lists',
      maxRequestUpstreamCalls: 10,
      typeDefs: parse(SDL),
      resolvers: {
        Mutation: {
          makeItems: () => [failingLate(), { id: null }],
        },
        Query: {
          bug: () => {
            void Promise.reject(new Error('a rejection nobody handles'));
            return 'answered';
          },
        },
      },
      context: () => ({}),
      metrics: createMetrics('lists'),
      logger: createLogger({ name: 'lists' }),
    },
    { port: 0 },
  );
  console.log(`listening on ${started.url}`);
});
