import { execute, getVariableValues, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import { createBoundedCache } from '../../lib/boundedCache.ts';

type ExecutorHost = ApolloServerOptionsWithGateway<BaseContext>['gateway'];
type LoadResult = Awaited<ReturnType<ExecutorHost['load']>>;
export type Executor = NonNullable<LoadResult['executor']>;

export interface CompiledExecution extends ExecutorHost {
  /** Operations compiled so far (kept up to `cacheSize`), for tests and diagnostics. */
  readonly compiledOperations: number;
}

export interface CompiledExecutionOptions {
  /** Distinct operations whose compiled form is kept. @default 1000 */
  cacheSize?: number;
}

/**
 * graphql-js interprets every field of every value on every request: a leaderboard of 100 users
 * (about 1,900 values) took 0.7 ms of a subgraph's CPU to execute, the largest cost it added to the
 * upstream call. graphql-jit compiles each query once into a function that takes 0.04 ms on the
 * same data. Apollo Server takes a custom executor only through its gateway interface, so this
 * presents the subgraph's own schema as one.
 *
 * Only queries are compiled. Variables are coerced by graphql-js first, so a bad variable gets
 * graphql-js's exact error (Apollo maps it to BAD_USER_INPUT and HTTP 400); mutations (serial,
 * never hot) and anything the compiler refuses run on graphql-js as before. One difference
 * remains, allowed by the spec: when a non-null root field nulls the whole answer, graphql-js
 * stops before the root fields after it, graphql-jit still runs them and reports their errors too.
 */
export function compiledExecution(schema: GraphQLSchema, { cacheSize = 1000 }: CompiledExecutionOptions = {}): CompiledExecution {
  const compiled = createBoundedCache<CompiledQuery | null>(cacheSize);

  function compiledFor(queryHash: string, requestContext: Parameters<Executor>[0]): CompiledQuery | null {
    const key = `${requestContext.operationName ?? ''}\u0000${queryHash}`;
    let query = compiled.get(key);
    if (query === undefined) {
      const result = compileQuery(schema, requestContext.document, requestContext.operationName ?? undefined);
      query = isCompiledQuery(result) ? result : null;
      compiled.set(key, query);
    }
    return query;
  }

  const executor: Executor = async (requestContext) => {
    const { document, operation, context, queryHash } = requestContext;
    const variables = requestContext.request.variables ?? {};
    const interpreted = () => execute({ schema, document, contextValue: context, variableValues: variables, operationName: requestContext.operationName });
    // Apollo hands over an unresolved operation too; graphql-js words that error as clients expect.
    if (operation?.operation !== 'query') return interpreted();
    const query = compiledFor(queryHash, requestContext);
    if (!query) return interpreted();
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
    if (coerced.errors) return { errors: coerced.errors };
    return query.query(undefined, context, variables);
  };

  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => {};
    },
    load: async () => ({ executor }),
    stop: async () => {},
    get compiledOperations() {
      return compiled.size;
    },
  };
}
