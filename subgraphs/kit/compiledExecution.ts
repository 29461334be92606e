import type { ServerResponse } from 'node:http';
import {
  execute,
  getNullableType,
  getVariableValues,
  GraphQLError,
  isListType,
  isObjectType,
  locatedError,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { createRepeatOperations, REMEMBERED_MAX_BYTES } from '../../lib/repeatOperations.ts';
import { documentBytes } from '../../lib/documentStore.ts';
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
 * never hot) and anything the compiler refuses run on graphql-js as before. Two differences
 * remain, allowed by the spec, both in errors after a null has spread: when a non-null root field
 * nulls the whole answer, graphql-js stops before the root fields after it, graphql-jit still runs
 * them and reports their errors too; in a list of non-null items, graphql-js reports the failing
 * item that nulled the list, graphql-jit every failing item (test/unit/compiledListErrors.test.ts).
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

/**
 * graphql-jit (0.8.9) files a list item whose promise rejects with `list.push(null)` in the code it
 * generates, where an item that arrives is written at its index. An item that failed before the
 * items ahead of it arrived was overwritten by them, and one that failed after an item behind it
 * arrived landed past the end: `redemptions(ids: [slow, slow, slow, failing])` came back three
 * long, `[slow, failing, fast]` four long with the error's null at the end. An item that resolves
 * to an `Error` takes the other road, written at its index as `null` with its error (nulling the
 * list for a non-null item), as graphql-js does for a rejection. So for the compiler, a resolver
 * whose field's type holds a list hands it over with its items' rejections turned into such
 * `Error`s, at every depth.
 */
interface WholeListField {
  field: GraphQLField<unknown, unknown>;
  resolve: GraphQLFieldResolver<unknown, unknown>;
  compiledResolve: GraphQLFieldResolver<unknown, unknown>;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** As graphql-js words what an item rejected with: a thrown non-error becomes its "Unexpected error value". */
function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : (locatedError(reason, undefined).originalError ?? new Error(String(reason)));
}

/** Lists nested in `type`: 1 for `[T]`, 2 for `[[T]!]`, 0 when it is no list. */
function listDepth(type: GraphQLOutputType): number {
  const nullable = getNullableType(type);
  return isListType(nullable) ? 1 + listDepth(nullable.ofType) : 0;
}

function settledItem(item: unknown, depth: number): unknown {
  if (isThenable(item)) return Promise.resolve(item).then(depth > 1 ? (value) => settledItems(value, depth - 1) : undefined, asError);
  return depth > 1 ? settledItems(item, depth - 1) : item;
}

/** The list with each item's rejection made an `Error` value; the same list when no item is a promise. */
function settledItems(list: unknown, depth: number): unknown {
  // Not a list (a string is refused as one too): the compiler reports it as graphql-js does.
  if (typeof list !== 'object' || list === null || !(Symbol.iterator in list)) return list;
  const items = Array.isArray(list) ? (list as unknown[]) : Array.from(list as Iterable<unknown>);
  let settled: unknown[] | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = settledItem(items[index], depth);
    if (item !== items[index]) (settled ??= items.slice(0, index))[index] = item;
    else if (settled) settled[index] = item;
  }
  return settled ?? items;
}

/**
 * The fields whose type holds a list and that have a resolver: a list of promises is always a
 * resolver's answer here (`redemptions`, `_entities`). A list a resolver leaves in a property of
 * its answer is read inline by graphql-jit; wrapping those too made a query over 100 users, each
 * with two such lists, a quarter slower, for items no resolver of ours makes promises of.
 */
function wholeListFields(schema: GraphQLSchema): WholeListField[] {
  const fields: WholeListField[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const { resolve } = field;
      const depth = listDepth(field.type);
      if (!resolve || depth === 0) continue;
      const compiledResolve: GraphQLFieldResolver<unknown, unknown> = (source, args, context, info) => {
        const value = resolve(source, args, context, info);
        return isThenable(value) ? Promise.resolve(value).then((list) => settledItems(list, depth)) : settledItems(value, depth);
      };
      fields.push({ field, resolve, compiledResolve });
    }
  }
  return fields;
}

/**
 * graphql-jit takes each field's resolver once, while it compiles: the fields hold the wrapped
 * resolvers for that call only. It is synchronous, so graphql-js (mutations, and queries with
 * compiled execution off) never sees them.
 */
function compileWithWholeLists(schema: GraphQLSchema, fields: readonly WholeListField[], document: DocumentNode, operationName: string | undefined): CompiledQuery | null {
  for (const entry of fields) entry.field.resolve = entry.compiledResolve;
  try {
    const result = compileQuery(schema, document, operationName);
    return isCompiledQuery(result) ? result : null;
  } finally {
    for (const entry of fields) entry.field.resolve = entry.resolve;
  }
}

export function compiledExecution(schema: GraphQLSchema, { cacheSize = 1000 }: CompiledExecutionOptions = {}): CompiledExecution {
  // Bounded in bytes as the repeats are (`documentBytes`, about what the compiled code holds: 1.3 MB
  // for a 10 KB operation of 987 fields): by entries alone, 1,000 such operations held 1.3 GB.
  const weights = new WeakMap<CompiledQuery, number>();
  const compiled = createBoundedCache<CompiledQuery | null>(cacheSize, { maxBytes: REMEMBERED_MAX_BYTES, sizeOf: (key, query) => key.length + ((query && weights.get(query)) ?? 0) });
  const listFields = wholeListFields(schema);
  // The same compiled queries by the text clients send, so that a repeat needs no hashing or parsing.
  const repeats = createRepeatOperations<{ query: CompiledQuery; operation: OperationDefinitionNode }>(schema, cacheSize);

  function compiledFor(queryHash: string, requestContext: Parameters<Executor>[0]): CompiledQuery | null {
    const key = `${requestContext.operationName ?? ''}\u0000${queryHash}`;
    let query = compiled.get(key);
    if (query === undefined) {
      query = compileWithWholeLists(schema, listFields, requestContext.document, requestContext.operationName ?? undefined);
      if (query) weights.set(query, documentBytes(requestContext.document));
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
