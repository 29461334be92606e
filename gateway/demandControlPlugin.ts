import { GraphQLError } from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import type { DemandControl } from './demandControl.ts';
import type { GatewayContext } from './context.ts';

/**
 * Demand control for every operation Apollo Server runs (HTTP POST and GET, and queries and
 * mutations over SSE and graphql-ws): once the operation and its variables are known, its
 * estimate is checked against the budget, and the budget is handed to the data sources, which
 * count what the subgraphs actually spend.
 */
export function demandControlPlugin(demand: DemandControl): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, request, contextValue }) {
          // Apollo refuses a request naming no operation of its document before this could matter.
          if (!operation) return;
          const checked = demand.check(document, operation, request.variables ?? {});
          if ('error' in checked) {
            // Refused before anything ran, like a validation error.
            throw new GraphQLError(checked.error.message, { extensions: { ...checked.error.extensions, http: { status: 400 } } });
          }
          contextValue.calls = demand.ledger(checked.estimate);
        },
      };
    },
  };
}
