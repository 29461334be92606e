import Negotiator from 'negotiator';
import { getVariableValues, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { createBoundedCache } from './boundedCache.ts';
import { documentBytes } from './documentStore.ts';
import { quickVariablesCheck } from './quickVariables.ts';

/**
 * The longest operation text remembered. The memory is keyed by the text itself and bounded in
 * entries: without this, a client padding distinct operations to the body limit could hold
 * gigabytes. Real operations are a few kilobytes; longer ones simply go through Apollo Server.
 */
const REMEMBERED_QUERY_MAX_CHARS = 16 * 1024;
/** What the remembered operations may hold in all, by `documentBytes` (64 MiB). */
export const REMEMBERED_MAX_BYTES = 64 * 1024 * 1024;

/** A repeat that may skip Apollo Server: what was remembered, the caller's variables, the response's media type. */
export interface Repeat<V> {
  value: V;
  variables: Record<string, unknown>;
  contentType: string;
}

/**
 * Operations Apollo Server has validated, by the text and name a client sends, for the fast paths
 * (the gateway's pass-through, a subgraph's compiled repeats) that serve their repeats.
 */
export interface RepeatOperations<V> {
  remember(query: string, operationName: string | null | undefined, value: V): void;
  /**
   * A repeat Apollo Server would accept as it is; undefined when Apollo must run the request: an
   * operation not remembered, a body of another shape (extensions beyond `clientLibrary`, persisted
   * queries, batches), a media type it would refuse, or variables it would report.
   */
  recall(body: unknown, accept: string | undefined): Repeat<V> | undefined;
  readonly size: number;
}

interface PlainRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

/**
 * Extensions Apollo Server reads nothing from, so a request carrying them runs exactly as without.
 * Apollo Client 4 sends `clientLibrary` (its name and version) on every request. Any other key, a
 * persisted query's among them, may change how Apollo Server runs the request: it stays on its path.
 */
const INERT_EXTENSIONS: ReadonlySet<string> = new Set(['clientLibrary']);

function inertExtensions(extensions: unknown): boolean {
  // Apollo Server takes null as none; what is not an object it refuses (400), and words the refusal.
  if (extensions === undefined || extensions === null) return true;
  if (typeof extensions !== 'object' || Array.isArray(extensions)) return false;
  for (const key in extensions) if (!INERT_EXTENSIONS.has(key)) return false;
  return true;
}

function plainRequest(body: unknown): PlainRequest | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { query, operationName, variables, extensions } = body as Record<string, unknown>;
  if (typeof query !== 'string' || !inertExtensions(extensions)) return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  return body as PlainRequest;
}

// Apollo Server's media types for a single result, in its order of preference.
const JSON_RESPONSE = 'application/json; charset=utf-8';
const RESPONSE_TYPES = [JSON_RESPONSE, 'application/graphql-response+json; charset=utf-8', 'application/json; callbackSpec=1.0; charset=utf-8'];
const responseTypes = createBoundedCache<string | null>(100);

/** The content type Apollo Server answers a single result with; null where it would refuse (406). Each `Accept` is negotiated once. */
function apolloResponseType(accept: string | undefined): string | null {
  if (!accept) return JSON_RESPONSE;
  let type = responseTypes.get(accept);
  if (type === undefined) {
    type = new Negotiator({ headers: { accept } }).mediaType(RESPONSE_TYPES) ?? null;
    responseTypes.set(accept, type);
  }
  return type;
}

export function createRepeatOperations<V extends { operation: OperationDefinitionNode }>(schema: GraphQLSchema, capacity: number, maxBytes = REMEMBERED_MAX_BYTES): RepeatOperations<V> {
  // Each with its variables' quick check, made once: graphql-js's coercion is the fallback, and the word on errors.
  // Counted by what the operation's parse holds, which is about what its compiled form and plan hold
  // too: 2,000 distinct operations of 10 KB and 987 fields, each within every limit, held 0.9 GB.
  const remembered = createBoundedCache<{ value: V; variablesPass: (variables: Record<string, unknown>) => boolean }>(capacity, {
    maxBytes,
    sizeOf: (key, entry) => key.length + documentBytes(entry.value.operation),
  });
  const keyOf = (query: string, operationName: string | null | undefined) => `${operationName ?? ''}\u0000${query}`;
  return {
    remember(query, operationName, value) {
      if (query.length <= REMEMBERED_QUERY_MAX_CHARS) remembered.set(keyOf(query, operationName), { value, variablesPass: quickVariablesCheck(schema, value.operation.variableDefinitions ?? []) });
    },
    recall(body, accept) {
      const request = plainRequest(body);
      const entry = request && remembered.get(keyOf(request.query, request.operationName));
      const contentType = entry && apolloResponseType(accept);
      if (!request || !entry || !contentType) return undefined;
      const variables = request.variables ?? {};
      // Apollo Server words variable errors itself (BAD_USER_INPUT, HTTP 400).
      if (!entry.variablesPass(variables) && getVariableValues(schema, entry.value.operation.variableDefinitions ?? [], variables).errors) return undefined;
      return { value: entry.value, variables, contentType };
    },
    get size() {
      return remembered.size;
    },
  };
}
