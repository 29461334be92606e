import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ConfigError, readInt, type Env } from '../lib/config.ts';
import { createBoundedCache } from '../lib/boundedCache.ts';
import { ErrorCode } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';

/**
 * Trusted documents (persisted operations) and automatic persisted queries, for every transport:
 * HTTP POST and GET (Apollo Server and the fast paths), SSE and graphql-ws each hand the operation
 * they received to `resolve` before anything parses it, and run what it gives back.
 *
 * - `off`: any text runs; ids are automatic persisted queries (APQ) only.
 * - `allow`: listed operations run by id or by text, and so does any other text, logged and counted.
 * - `enforce`: only listed operations run, by id or by their exact text; nothing else is parsed.
 *
 * Apollo Server's own APQ is off: this module's cache serves every transport, and an APQ hit
 * leaves a plain request that the fast paths serve.
 */

export type TrustedDocumentsMode = 'off' | 'allow' | 'enforce';

export interface TrustedDocumentsSettings {
  mode: TrustedDocumentsMode;
  /** The manifest read at start; absent when `off` and none was configured. */
  manifest?: TrustedManifest | undefined;
  /** Automatic persisted queries remembered (`off` and `allow`): at most so many, and so many bytes of text. */
  apq: { maxEntries: number; maxBytes: number };
}

/** One listed operation. */
export interface TrustedOperation {
  body: string;
  name?: string | undefined;
}

/** A manifest's operations by every id a client may name them with. */
export interface TrustedManifest {
  /** By SHA-256 hex of the body, and by the manifest's own id where it differs (SHA-1, `sha256:` prefix). */
  byId: ReadonlyMap<string, TrustedOperation>;
  /** Distinct operations. */
  size: number;
}

/** The largest manifest read: a generated one is a few hundred kilobytes. */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;
/** The longest id accepted in a request: a SHA-256 with its `sha256:` prefix is 71 characters. */
const MAX_ID_CHARS = 128;
// Hex, `sha256:` prefixes, and the `~` of Hive's app deployment ids (not listable here: answered not found).
const ID_CHARACTERS = /^[A-Za-z0-9:_.~-]+$/;
/** The start of an operation's name kept in the log (as the access log keeps it). */
const MAX_LOGGED_NAME = 100;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;
/**
 * The bytes V8 keeps for a remembered text and its key, so that `APQ_CACHE_MAX_BYTES` bounds the
 * memory and not a UTF-8 count: V8 stores a string one byte a character while all of them fit in
 * Latin-1, and two bytes for every character once one does not, twice its UTF-8 for a text that is
 * ASCII but for one character (64 MiB under a bound of 32).
 */
const heldBytes = (key: string, text: string) => key.length + text.length * (BEYOND_LATIN1.test(text) ? 2 : 1);
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

const apolloManifest = z.object({
  format: z.literal('apollo-persisted-query-manifest'),
  version: z.literal(1),
  operations: z.array(
    z.object({
      id: z.string().min(1).max(MAX_ID_CHARS),
      name: z.string().max(10_000).optional(),
      type: z.enum(['query', 'mutation', 'subscription']),
      body: z.string().min(1),
    }),
  ),
});
/** graphql-codegen's client preset with `persistedDocuments`: `{ "<hash>": "<body>" }`. */
const documentMap = z.record(z.string().min(1).max(MAX_ID_CHARS), z.string().min(1));

const SETTING = 'TRUSTED_DOCUMENTS_MANIFEST';

/**
 * A manifest's text, validated: Apollo's persisted query manifest, or graphql-codegen's map of
 * hash to body. Every id must be the hash of its body (SHA-256, as Apollo's generator and APQ
 * compute it, bare or with GraphQL over HTTP's `sha256:` prefix; or SHA-1, graphql-codegen's
 * default), so that an id can never stand for another text than its own. Throws a ConfigError
 * naming the setting, the operation and the fix.
 */
export function parseManifest(text: string, source = SETTING): TrustedManifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`${source} is not JSON: expected Apollo's persisted query manifest ({"format":"apollo-persisted-query-manifest","version":1,"operations":[...]}) or graphql-codegen's {"<hash>": "<body>"}.`);
  }
  let entries: { id: string; name?: string | undefined; body: string; where: string }[];
  const isApollo = typeof json === 'object' && json !== null && 'format' in json;
  if (isApollo) {
    const parsed = apolloManifest.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(`${source} is not a valid Apollo persisted query manifest: ${issue?.path.join('.') || 'the file'}: ${issue?.message}. Regenerate it with @apollo/generate-persisted-query-manifest.`);
    }
    entries = parsed.data.operations.map((operation, index) => ({ ...operation, where: `operations[${index}]${operation.name ? ` (${operation.name.slice(0, MAX_LOGGED_NAME)})` : ''}` }));
  } else {
    const parsed = documentMap.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(`${source} must be Apollo's persisted query manifest or graphql-codegen's {"<hash>": "<body>"}: ${issue?.path.join('.') || 'the file'}: ${issue?.message}.`);
    }
    entries = Object.entries(parsed.data).map(([id, body]) => ({ id, body, where: `"${id}"` }));
  }
  const byId = new Map<string, TrustedOperation>();
  let size = 0;
  for (const { id, name, body, where } of entries) {
    const hash = sha256(body);
    if (id !== hash && id !== `sha256:${hash}` && id !== sha1(body)) {
      throw new ConfigError(`${source}: ${where} has an id that is not the SHA-256 (nor the SHA-1) of its body, so it could name another text than its own: regenerate the manifest rather than edit it.`);
    }
    if (!byId.has(hash)) size += 1;
    const operation = { body, name };
    byId.set(hash, operation);
    if (id !== hash) byId.set(id, operation);
  }
  return { byId, size };
}

/** Reads and validates the manifest at `path`, bounded before it is read. */
export function readManifest(path: string): TrustedManifest {
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch (error) {
    throw new ConfigError(`${SETTING} (${path}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}.`);
  }
  if (bytes > MAX_MANIFEST_BYTES) throw new ConfigError(`${SETTING} (${path}) is ${bytes} bytes, more than the ${MAX_MANIFEST_BYTES} a manifest may have.`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // A directory, or a file that went between the two calls.
    throw new ConfigError(`${SETTING} (${path}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}.`);
  }
  return parseManifest(text, `${SETTING} (${path})`);
}

/** The settings, from the environment; the manifest is read here, so a bad one stops the start. */
export function readTrustedDocumentsSettings(env: Env): TrustedDocumentsSettings {
  const path = env.TRUSTED_DOCUMENTS_MANIFEST || undefined;
  const raw = env.TRUSTED_DOCUMENTS?.toLowerCase() || undefined;
  if (raw !== undefined && raw !== 'off' && raw !== 'allow' && raw !== 'enforce') {
    throw new ConfigError(`TRUSTED_DOCUMENTS must be off, allow or enforce; got "${env.TRUSTED_DOCUMENTS}".`);
  }
  // With a manifest: enforced in production, listed and logged elsewhere; without one, off.
  const mode: TrustedDocumentsMode = raw ?? (path ? (env.NODE_ENV === 'production' ? 'enforce' : 'allow') : 'off');
  if (mode !== 'off' && !path) throw new ConfigError(`TRUSTED_DOCUMENTS=${mode} needs TRUSTED_DOCUMENTS_MANIFEST, the path of the manifest of the operations clients may run.`);
  return {
    mode,
    manifest: path ? readManifest(path) : undefined,
    apq: {
      maxEntries: readInt(env, 'APQ_CACHE_ENTRIES', 10_000, { min: 1, max: 1_000_000 }),
      maxBytes: readInt(env, 'APQ_CACHE_MAX_BYTES', 32 * 1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
    },
  };
}

/** An error a transport sends as it is, with the HTTP status and headers it goes with. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  error: { message: string; extensions: { code: string } };
}

/** What to run: the request as it came, its text found by id (the id taken out), or a refusal. */
export type Resolution = { kind: 'as-is' } | { kind: 'resolved'; query: string; extensions: Record<string, unknown> | undefined } | { kind: 'refused'; refusal: Refusal };

/** An operation as a transport received it, nothing about it trusted yet. */
export interface OperationParams {
  query?: unknown;
  operationName?: unknown;
  /** GraphQL over HTTP's persisted documents (also Hive's and Relay's): the id alone. */
  documentId?: unknown;
  extensions?: unknown;
}

const AS_IS: Resolution = { kind: 'as-is' };
// As Apollo Server and Router answer them: a client that learns an id is unknown must not cache that.
const UNCACHED = { 'cache-control': 'private, no-cache, must-revalidate' };
const refused = (status: number, code: string, message: string): Resolution => ({ kind: 'refused', refusal: { status, headers: UNCACHED, error: { message, extensions: { code } } } });

const MALFORMED_PERSISTED_QUERY = refused(400, 'BAD_REQUEST', '`extensions.persistedQuery` must be {"version": 1, "sha256Hash": "<hex>"}.');
const MALFORMED_DOCUMENT_ID = refused(400, 'BAD_REQUEST', `\`documentId\` must be a string of at most ${MAX_ID_CHARS} letters, digits and ":_.~-".`);
const BOTH_IDS = refused(400, 'BAD_REQUEST', 'Send `documentId` or `extensions.persistedQuery`, not both.');
// Apollo Server's words and status: Apollo clients match on the message and, on a 200, send the text.
const NOT_FOUND_APQ = refused(200, ErrorCode.PersistedQueryNotFound, 'PersistedQueryNotFound');
// By `documentId` there is no text to come: Apollo Router's 404 for an id not in its list.
const NOT_FOUND_ID = refused(404, ErrorCode.PersistedQueryNotFound, 'PersistedQueryNotFound');
const MISMATCH = refused(400, 'BAD_REQUEST', 'provided sha does not match query');
const NOT_IN_LIST = refused(403, ErrorCode.PersistedQueryNotInList, "This operation is not in the gateway's trusted documents (TRUSTED_DOCUMENTS=enforce): send a listed operation, by id or by its exact text.");

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const validId = (id: unknown): id is string => typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_CHARS && ID_CHARACTERS.test(id);

/** The operation's name for the log: as sent, else as written at the start of the text; never parsed. */
function nameOf(operationName: unknown, text: string): string | undefined {
  const name = typeof operationName === 'string' && operationName ? operationName : /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(text.slice(0, 300))?.[1];
  return name && name.length > MAX_LOGGED_NAME ? `${name.slice(0, MAX_LOGGED_NAME)}…` : name;
}

/** The extensions without `persistedQuery`, or undefined when nothing else was there. */
function withoutPersistedQuery(extensions: unknown): Record<string, unknown> | undefined {
  if (!isRecord(extensions)) return undefined;
  const { persistedQuery: _taken, ...rest } = extensions;
  return Object.keys(rest).length ? rest : undefined;
}

export interface TrustedDocuments {
  readonly mode: TrustedDocumentsMode;
  /** Decides on one operation before anything parses it; a hash of its text at most. */
  resolve(params: OperationParams): Resolution;
  /** The same for an HTTP request's operation (POST body or GET query string), given back in the same form. */
  admitHttp(request: { method: string; body: unknown; url: URL }): { admitted: { body: unknown; url: URL } } | { refusal: Refusal };
  /** The same for a body or a graphql-ws `subscribe` payload: what to run, with an id replaced by its text. */
  admitPayload<P extends OperationParams>(payload: P): { admitted: P } | { refusal: Refusal };
}

export function createTrustedDocuments(settings: TrustedDocumentsSettings, { logger, registry }: { logger: Logger; registry?: Registry | undefined }): TrustedDocuments {
  const { mode } = settings;
  // Ids resolve whenever a manifest is given; `off` only skips the check of free text.
  const { manifest } = settings;
  // Enforced, nothing outside the manifest is ever remembered: the cache does not exist.
  const apq =
    mode === 'enforce'
      ? undefined
      : createBoundedCache<string>(settings.apq.maxEntries, { maxBytes: settings.apq.maxBytes, sizeOf: heldBytes });
  // Each unlisted document is logged once (among the last so many), counted every time.
  const logged = createBoundedCache<true>(1000);

  const outcomes = registry
    ? new Counter({ name: 'gateway_trusted_documents_total', help: `Operations checked against the trusted documents (mode ${mode}), by outcome`, labelNames: ['outcome'] as const, registers: [registry] })
    : undefined;
  const persisted = registry
    ? new Counter({ name: 'gateway_persisted_queries_total', help: 'Automatic persisted queries: hits, misses and texts registered', labelNames: ['outcome'] as const, registers: [registry] })
    : undefined;
  if (registry && apq) {
    new Gauge({ name: 'gateway_persisted_queries_cached', help: 'Automatic persisted queries remembered', registers: [registry], collect() { this.set(apq.size); } });
    new Gauge({ name: 'gateway_persisted_queries_cached_bytes', help: 'Bytes of operation text the automatic persisted queries hold', registers: [registry], collect() { this.set(apq.bytes); } });
  }
  const count = (outcome: 'listed' | 'unlisted' | 'refused' | 'unknown_id' | 'malformed') => outcomes?.inc({ outcome });

  /** Free text: listed, or else refused (enforce) or logged (allow). */
  function checkText(text: string, operationName: unknown, knownHash?: string): Resolution {
    // Off (the default) costs nothing per request: the hash is taken only when a mode needs it.
    if (mode === 'off') return AS_IS;
    const hash = knownHash ?? sha256(text);
    if (manifest?.byId.get(hash)?.body === text) {
      count('listed');
      return AS_IS;
    }
    if (mode === 'enforce') {
      count('refused');
      return NOT_IN_LIST;
    }
    count('unlisted');
    if (!logged.get(hash)) {
      logged.set(hash, true);
      logger.warn({ operation: nameOf(operationName, text), documentHash: hash }, 'operation not in the trusted documents');
    }
    return AS_IS;
  }

  function lookUp(id: string): TrustedOperation | undefined {
    if (!manifest) return undefined;
    return manifest.byId.get(id) ?? (id.startsWith('sha256:') ? manifest.byId.get(id.slice('sha256:'.length)) : undefined);
  }

  function resolve({ query, operationName, documentId, extensions }: OperationParams): Resolution {
    // As Apollo Server reads it, a `persistedQuery` of null is none.
    const persistedQuery = isRecord(extensions) ? (extensions.persistedQuery ?? undefined) : undefined;
    const text = typeof query === 'string' && query !== '' ? query : undefined;
    const byDocumentId = documentId !== undefined && documentId !== null;
    if (persistedQuery === undefined && !byDocumentId) return text === undefined ? AS_IS : checkText(text, operationName);

    let id: string;
    if (byDocumentId) {
      if (persistedQuery !== undefined) return (count('malformed'), BOTH_IDS);
      if (!validId(documentId)) return (count('malformed'), MALFORMED_DOCUMENT_ID);
      id = documentId;
    } else {
      if (!isRecord(persistedQuery) || persistedQuery.version !== 1 || !validId(persistedQuery.sha256Hash)) return (count('malformed'), MALFORMED_PERSISTED_QUERY);
      id = persistedQuery.sha256Hash;
    }
    const rest = withoutPersistedQuery(extensions);
    const listed = lookUp(id);

    if (text === undefined) {
      if (listed) {
        count('listed');
        return { kind: 'resolved', query: listed.body, extensions: rest };
      }
      const remembered = byDocumentId ? undefined : apq?.get(id);
      if (remembered !== undefined) {
        persisted?.inc({ outcome: 'hit' });
        // Remembered text is free text: in `allow` it is logged and counted like any other.
        const checked = checkText(remembered, operationName, id);
        return checked.kind === 'refused' ? checked : { kind: 'resolved', query: remembered, extensions: rest };
      }
      if (!byDocumentId && apq) persisted?.inc({ outcome: 'miss' });
      count('unknown_id');
      return byDocumentId ? NOT_FOUND_ID : NOT_FOUND_APQ;
    }

    // An id and a text: the text must be the one the id names.
    if (listed) {
      if (listed.body !== text) return (count('malformed'), MISMATCH);
      count('listed');
      return { kind: 'resolved', query: text, extensions: rest };
    }
    const hash = sha256(text);
    if (id !== hash && id !== `sha256:${hash}`) return (count('malformed'), MISMATCH);
    const checked = checkText(text, operationName, hash);
    if (checked.kind === 'refused') return checked;
    if (apq && !byDocumentId) {
      apq.set(hash, text);
      persisted?.inc({ outcome: 'registered' });
    }
    return { kind: 'resolved', query: text, extensions: rest };
  }

  function admitPayload<P extends OperationParams>(payload: P): { admitted: P } | { refusal: Refusal } {
    const resolution = resolve(payload);
    if (resolution.kind === 'refused') return { refusal: resolution.refusal };
    if (resolution.kind === 'as-is') return { admitted: payload };
    const { documentId: _id, extensions: _extensions, ...rest } = payload;
    return { admitted: { ...rest, query: resolution.query, ...(resolution.extensions ? { extensions: resolution.extensions } : {}) } as P };
  }

  return {
    mode,
    resolve,
    admitPayload,

    admitHttp({ method, body, url }) {
      if (method !== 'GET') {
        // Batches, text and anything else not an object: Apollo Server refuses them before parsing.
        if (!isRecord(body)) return { admitted: { body, url } };
        const admitted = admitPayload(body);
        return 'refusal' in admitted ? admitted : { admitted: { body: admitted.admitted, url } };
      }
      const search = url.searchParams;
      const rawExtensions = search.get('extensions');
      let extensions: unknown = rawExtensions ?? undefined;
      if (rawExtensions !== null) {
        try {
          extensions = JSON.parse(rawExtensions) as unknown;
        } catch {
          // Apollo Server refuses it in its own words; nothing runs.
        }
      }
      const resolution = resolve({ query: search.get('query') ?? undefined, operationName: search.get('operationName') ?? undefined, documentId: search.get('documentId') ?? undefined, extensions });
      if (resolution.kind === 'refused') return { refusal: resolution.refusal };
      if (resolution.kind === 'as-is') return { admitted: { body, url } };
      const rewritten = new URL(url);
      rewritten.searchParams.set('query', resolution.query);
      rewritten.searchParams.delete('documentId');
      if (resolution.extensions) rewritten.searchParams.set('extensions', JSON.stringify(resolution.extensions));
      else rewritten.searchParams.delete('extensions');
      return { admitted: { body, url: rewritten } };
    },
  };
}
