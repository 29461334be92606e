import { GraphQLError, getOperationAST, parse, type DocumentNode } from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import type { Admission } from '../lib/apolloHttp.ts';
import type { GatewayContext } from './context.ts';
import { conditionalTopLevel, fragmentsOf, rootDirectivesMessage } from './subscriptions/planning.ts';

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

/** Both must be in the text for the refusal below to be possible: other requests are never parsed here. */
const MENTIONS_SUBSCRIPTION = /\bsubscription\b/;
const MENTIONS_CONDITION = /@\s*(?:skip|include)\b/;

/**
 * The refusal, before Apollo Server sees the request (`apolloHandler`'s `admit`), of a subscription
 * whose top level holds `@skip` or `@include`. graphql-js 16's single-root-field rule, which Apollo
 * Server runs whatever its options, reads no variables and so throws on one given a variable: a 500
 * that no plugin can answer instead, validation coming before every hook that may answer. The
 * refusal is the one graphql-ws, SSE and multipart give (`subscriptions/prepare.ts`); a text that
 * does not parse is left for Apollo Server to refuse in its own words.
 */
export function refuseConditionalSubscriptionRoot({ method, body, url }: { method: string; body: unknown; url: URL }, maxTokens?: number): Extract<Admission, { refusal: unknown }> | undefined {
  const fields = method === 'GET' ? { query: url.searchParams.get('query'), operationName: url.searchParams.get('operationName') } : (body as { query?: unknown; operationName?: unknown } | null | undefined);
  const query = fields?.query;
  if (typeof query !== 'string' || !MENTIONS_SUBSCRIPTION.test(query) || !MENTIONS_CONDITION.test(query)) return undefined;
  let document: DocumentNode;
  try {
    // Within the gateway's token bound: a text past it is Apollo Server's to refuse, as it parses it.
    document = parse(query, { maxTokens });
  } catch {
    return undefined;
  }
  const operation = getOperationAST(document, typeof fields?.operationName === 'string' ? fields.operationName : undefined);
  if (operation?.operation !== 'subscription' || !conditionalTopLevel(operation, fragmentsOf(document)).length) return undefined;
  return { refusal: { status: 400, headers: {}, error: { message: rootDirectivesMessage(operation), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } } } };
}
