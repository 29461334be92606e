import { GraphQLError, print, type DocumentNode, type GraphQLSchema } from 'graphql';
import { ROUTER_SUPPORTED_SUPERGRAPH_FEATURES, Supergraph, type Schema } from '@apollo/federation-internals';
import { QueryPlanner } from '@apollo/query-planner';
import { createBoundedCache } from '../lib/boundedCache.ts';
import { planSubscription, type SubscriptionPlan } from './subscriptions/planning.ts';
import { withScalarParsers } from './scalarLiterals.ts';

/**
 * Apollo's query planner over the supergraph, for the operations the gateway plans outside Apollo
 * Gateway's executor: subscriptions, and the queries the single-fetch shortcut sends as they are.
 */
export interface Planner {
  queryPlanner: QueryPlanner;
  apiSchema: Schema;
  graphqlApiSchema: GraphQLSchema;
  supergraphSchema: GraphQLSchema;
  /** A subscription's plan, cached by operation text and name; or why it cannot be planned. */
  plan(document: DocumentNode, operationName: string | undefined): SubscriptionPlan | readonly GraphQLError[];
}

export function createPlanner(supergraphSdl: string, { cacheSize = 1000 }: { cacheSize?: number } = {}): Planner {
  // The access directives are the gateway's to enforce (gateway/auth/), so the planner accepts them.
  const supergraph = Supergraph.build(supergraphSdl, { supportedFeatures: ROUTER_SUPPORTED_SUPERGRAPH_FEATURES });
  const apiSchema = supergraph.apiSchema();
  const planning = { queryPlanner: new QueryPlanner(supergraph), apiSchema, graphqlApiSchema: withScalarParsers(apiSchema.toGraphQLJSSchema()) };
  const cache = createBoundedCache<SubscriptionPlan>(cacheSize);
  return {
    ...planning,
    supergraphSchema: supergraph.schema.toGraphQLJSSchema(),
    plan(document, operationName) {
      const key = `${operationName ?? ''}\u0000${print(document)}`;
      const cached = cache.get(key);
      if (cached) return cached;
      const plan = planSubscription(planning, document, operationName);
      if ('document' in plan) cache.set(key, plan);
      return plan;
    },
  };
}
