import { GraphQLError } from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import type { GatewayContext } from './context.ts';

export const SUBSCRIPTION_TRANSPORTS_MESSAGE =
  'A subscription is answered as a stream, on /graphql: over graphql-ws (WebSocket), over SSE (Accept: text/event-stream) or over multipart HTTP (Accept: multipart/mixed;subscriptionSpec=1.0, as Apollo Client sends it)';

/**
 * A subscription that reaches Apollo Server came over plain HTTP, asking for one JSON answer: the
 * gateway's executor cannot give one (Apollo Gateway throws, which was a 500). Refused once the
 * operation is known, before anything is planned or counted, with the transports that serve it.
 */
export function plainHttpSubscriptionsPlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation === 'subscription') throw new GraphQLError(SUBSCRIPTION_TRANSPORTS_MESSAGE, { extensions: { code: 'BAD_REQUEST', http: { status: 406 } } });
        },
      };
    },
  };
}
