import type { ServerResponse } from 'node:http';
import { execute, getVariableValues, GraphQLError, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { createRepeatOperations } from '../../lib/repeatOperations.ts';
import { DATA_ONLY_HEADER } from '../../lib/dataOnlyAnswers.ts';

type ExecutorHost = ApolloServerOptionsWithGateway<BaseContext>['gateway'];
type LoadResult = Awaited<ReturnType<ExecutorHost['load']>>;
export type Executor = NonNullable<LoadResult['executor']>;

export interface CompiledExecution extends ExecutorHost {
  /** Operations compiled so far (kept up to `cacheSize`), for tests and diagnostics. */
  readonly compiledOperations: number;
  /**
   * Runs a repeat of a query already compiled for an earlier request, without Apollo Server. An
   * answer without errors is written here; one with errors is kept in the returned context, for
   * Apollo Server to format: the resolvers never run twice. `served: false` without a context:
   * Apollo Server runs the request from the start.
   */
  serve<Context extends object>(body: unknown, makeContext: () => Context | Promise<Context>, accept: string | undefined, res: ServerResponse): Promise<{ served: true } | { served: false; context?: Context }>;
  /** As `serve`, the answer handed back instead of written (a read inside a batch): its bytes always hold `data` alone. */
  answer<Context extends object>(body: unknown, makeContext: () => Context | Promise<Context>, accept: string | undefined): Promise<CompiledAnswer<Context>>;
}

export type CompiledAnswer<Context> = { served: true; bytes: Buffer; contentType: string } | { served: false; context?: Context };

/** A result computed before Apollo Server ran the request, carried in its context (which Apollo copies). */
const PRECOMPUTED = Symbol('precomputed result');
type Precomputed = { result: ExecutionResult } | { thrown: unknown };

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
/**
 * graphql-jit words a resolver's unexpected error (a TypeError, say) as an error whose `extensions`
 * is undefined. Apollo Server reads `extensions.code` before our `formatError` sees an error, so
 * such an error broke the formatting: it reached the client with no path, and the log with
 * nothing, where graphql-js's is masked with its path and logged. Such errors get empty extensions.
 */
function withExtensions(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.some((error) => error.extensions === undefined)) return result;
  const errors = result.errors.map((error) => {
    if (error.extensions !== undefined) return error;
    const rebuilt = new GraphQLError(error.message, { path: error.path, originalError: error.originalError ?? error, extensions: {} });
    Object.defineProperty(rebuilt, 'locations', { value: error.locations, enumerable: error.locations !== undefined });
    return rebuilt;
  });
  return { ...result, errors };
}

export function compiledExecution(schema: GraphQLSchema, { cacheSize = 1000 }: CompiledExecutionOptions = {}): CompiledExecution {
  const compiled = createBoundedCache<CompiledQuery | null>(cacheSize);
  // The same compiled queries by the text clients send, so that a repeat needs no hashing or parsing.
  const repeats = createRepeatOperations<{ query: CompiledQuery; operation: OperationDefinitionNode }>(schema, cacheSize);

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
    const precomputed = (context as Record<symbol, Precomputed | undefined>)[PRECOMPUTED];
    if (precomputed) {
      if ('thrown' in precomputed) throw precomputed.thrown;
      return precomputed.result;
    }
    const variables = requestContext.request.variables ?? {};
    const interpreted = () => execute({ schema, document, contextValue: context, variableValues: variables, operationName: requestContext.operationName });
    // Apollo hands over an unresolved operation too; graphql-js words that error as clients expect.
    if (operation?.operation !== 'query') return interpreted();
    const query = compiledFor(queryHash, requestContext);
    if (!query) return interpreted();
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
    if (coerced.errors) return { errors: coerced.errors };
    if (requestContext.request.query) repeats.remember(requestContext.request.query, requestContext.request.operationName, { query, operation });
    return withExtensions(await query.query(undefined, context, variables));
  };

  async function answer<Context extends object>(body: unknown, makeContext: () => Context | Promise<Context>, accept: string | undefined): Promise<CompiledAnswer<Context>> {
    const repeat = repeats.recall(body, accept);
    if (!repeat) return { served: false as const };
    const made = makeContext();
    // Every subgraph's context is made at once: awaiting one that is not a promise would still cost a turn of the microtask queue.
    const context = made instanceof Promise ? await made : made;
    let result: ExecutionResult;
    try {
      result = withExtensions(await repeat.value.query.query(undefined, context, repeat.variables));
    } catch (thrown) {
      return { served: false as const, context: Object.assign(context, { [PRECOMPUTED]: { thrown } }) };
    }
    if (result.errors?.length) return { served: false as const, context: Object.assign(context, { [PRECOMPUTED]: { result } }) };
    // As Apollo Server writes a result: JSON and a newline. Encoded once: a string would be measured
    // for its length, then encoded again as it is written (4 µs more for 31 KB).
    return { served: true as const, bytes: Buffer.from(`${JSON.stringify({ data: result.data })}\n`), contentType: repeat.contentType };
  }

  async function serve<Context extends object>(body: unknown, makeContext: () => Context | Promise<Context>, accept: string | undefined, res: ServerResponse) {
    const outcome = await answer(body, makeContext, accept);
    if (!outcome.served) return outcome;
    res.writeHead(200, { 'content-type': outcome.contentType, 'content-length': outcome.bytes.length, [DATA_ONLY_HEADER]: '1' });
    res.end(outcome.bytes);
    return { served: true as const };
  }

  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => {};
    },
    load: async () => ({ executor }),
    stop: async () => {},
    answer,
    serve,
    get compiledOperations() {
      return compiled.size;
    },
  };
}
