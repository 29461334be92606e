import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLFormattedError, GraphQLSchema, ValidationRule } from 'graphql';
import Negotiator from 'negotiator';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { readBody, sendJson, PayloadTooLargeError } from '../../lib/http.ts';
import { blockedAsCsrf, CSRF_MESSAGE, isJsonContentType } from '../../lib/requestChecks.ts';
import type { TrustedDocuments } from '../trustedDocuments.ts';
import { requestShapeError } from './prepare.ts';
import type { Authenticated } from '../auth/authenticate.ts';
import type { OperationRunner } from './operations.ts';
import type { SharedPayloads } from './sharedPayloads.ts';

/** What a streaming HTTP transport (SSE, multipart) is built with. */
export interface StreamedTransportOptions {
  schema: GraphQLSchema;
  runner: OperationRunner;
  rules?: readonly ValidationRule[];
  /** The largest request body read; a larger one is refused with 413 before it is buffered. */
  maxBodyBytes: number;
  /** The one formatError (codes, masking, suggestions hidden in production). */
  format: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** Trusted documents and persisted queries, checked as on every transport. */
  trustedDocuments: Pick<TrustedDocuments, 'admitHttp'>;
  /** What the gateway's HTTP layer established about the caller of this request, when its OAuth 2.0 is on. */
  authenticatedOf?: (req: IncomingMessage) => Authenticated | undefined;
  /** Where each event's payload is serialised once for all its identical subscribers. */
  payloads?: SharedPayloads | undefined;
}

/** What a streaming HTTP transport (SSE, multipart) runs: the body or the URL's parameters, ids already replaced by their text. */
export interface StreamedRequest {
  method: 'GET' | 'POST';
  /** The JSON body of a POST; null for a GET. */
  body: Record<string, unknown> | null;
  url: URL;
  /** The operation's parameters, from the body or the URL. */
  params: Record<string, unknown>;
}

/** A GET's operation, as graphql-sse reads it from the URL (JSON that does not parse stands as text, and is refused as such). */
export function paramsOfSearch(url: URL): Record<string, unknown> {
  const json = (name: string) => {
    const raw = url.searchParams.get(name);
    if (raw === null) return undefined;
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  };
  return { query: url.searchParams.get('query') ?? undefined, operationName: url.searchParams.get('operationName') ?? undefined, variables: json('variables'), extensions: json('extensions') };
}

// Apollo Server's media types for a single result, in its order of preference: a tie (`*/*`) is JSON.
const JSON_TYPE = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';
const EVENT_STREAM = 'text/event-stream';
/**
 * Real clients' `Accept` is about 100 characters; negotiating one of Node's 16 KB took up to 17 ms
 * of CPU, on every request to `/graphql` before any rate limit. A longer one is not negotiated:
 * no event stream, refusals in application/json.
 */
const MAX_NEGOTIATED_ACCEPT = 1024;
/** Each `Accept` negotiated once: clients send the same few on every request. */
const negotiated = createBoundedCache<string | null>(64);

function preferredOf(accept: string, offered: 'refusal' | 'stream'): string | null {
  const key = `${offered}\u0000${accept}`;
  let type = negotiated.get(key);
  if (type === undefined) {
    const types = offered === 'refusal' ? [JSON_TYPE, GRAPHQL_RESPONSE_TYPE] : [JSON_TYPE, GRAPHQL_RESPONSE_TYPE, EVENT_STREAM];
    type = new Negotiator({ headers: { accept } }).mediaType(types) ?? null;
    negotiated.set(key, type);
  }
  return type;
}

/**
 * Whether a request is for an event stream rather than a single result: `text/event-stream` named
 * in its `Accept`, acceptable (q > 0) and ranked above both JSON types (by q, then how specifically
 * each is named, then order; a tie through a wildcard is JSON). urql's default for queries lists
 * it after the JSON types, so a query from it gets Apollo Server's answer.
 */
export function prefersEventStream(accept: string | undefined): boolean {
  if (accept === undefined || accept.length > MAX_NEGOTIATED_ACCEPT || !accept.toLowerCase().includes(EVENT_STREAM)) return false;
  return preferredOf(accept, 'stream') === EVENT_STREAM;
}

/**
 * The type a refusal is sent in, negotiated as Apollo Server negotiates a single result's:
 * `application/graphql-response+json` when the client prefers it, as Apollo Client 4 does (it reads
 * a non-2xx `application/json` answer as a transport failure and drops the errors' codes), else
 * `application/json`, also where neither is acceptable (a refusal is sent whatever the client asked).
 */
export function refusalType(accept: string | undefined): string {
  if (accept === undefined || accept.length > MAX_NEGOTIATED_ACCEPT) return JSON_TYPE;
  return preferredOf(accept, 'refusal') ?? JSON_TYPE;
}

/** A refusal's errors, in the type the request negotiates. */
export const sendRefusal = (req: IncomingMessage, res: ServerResponse, status: number, errors: readonly unknown[], headers: Record<string, string> = {}) =>
  sendJson(res, status, { errors }, headers, refusalType(req.headers.accept));

const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers?: Record<string, string>) => sendRefusal(req, res, status, [{ message, extensions: { code: 'BAD_REQUEST' } }], headers);

/**
 * The checks every streaming HTTP transport makes before an operation is prepared, as Apollo
 * Server makes them for queries: GET or POST only, CSRF prevention, a JSON body read within
 * `maxBodyBytes` (a larger one is refused before it is buffered), trusted documents, and the
 * request's shape. A request that fails one is answered here with a typed error, and undefined is
 * returned.
 */
export async function readStreamedRequest(
  req: IncomingMessage,
  res: ServerResponse,
  { maxBodyBytes, trustedDocuments, transport }: { maxBodyBytes: number; trustedDocuments: Pick<TrustedDocuments, 'admitHttp'>; transport: string },
): Promise<StreamedRequest | undefined> {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'POST') {
    req.resume();
    return void refuse(req, res, 405, `${transport} takes a GET or a POST`, { allow: 'GET, POST' });
  }
  if (blockedAsCsrf(req.headers)) {
    req.resume();
    return void refuse(req, res, 400, CSRF_MESSAGE);
  }
  let body: Record<string, unknown> | null = null;
  if (method === 'POST') {
    if (!isJsonContentType(req.headers['content-type'])) {
      req.resume();
      return void refuse(req, res, 415, `${transport} takes a body of type application/json`);
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, maxBodyBytes);
    } catch (error) {
      // As Apollo Server's refusal (lib/apolloHttp.ts): the connection closes rather than read the rest.
      if (error instanceof PayloadTooLargeError) return void refuse(req, res, 413, error.message, { connection: 'close' });
      res.destroy();
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      return void refuse(req, res, 400, 'request body is not valid JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return void refuse(req, res, 400, 'request body must be a JSON object');
    body = parsed as Record<string, unknown>;
  }
  const admission = trustedDocuments.admitHttp({ method, body, url: new URL(req.url ?? '/', 'http://local') });
  if ('refusal' in admission) {
    const { status, headers, error } = admission.refusal;
    // A 200 would promise a stream: an unknown id is a plain 404 here.
    return void sendRefusal(req, res, status === 200 ? 404 : status, [error], headers);
  }
  const admittedBody = admission.admitted.body as Record<string, unknown> | null;
  const url = admission.admitted.url;
  const params = admittedBody ?? paramsOfSearch(url);
  const shape = requestShapeError(params);
  if (shape) return void refuse(req, res, 400, shape);
  return { method, body: admittedBody, url, params };
}

/**
 * Waits until the response can take more, or is gone: a slow reader holds its own events back, in
 * its own bounded queue. Both listeners go once either fires (a race of two `once` left the
 * loser's behind: two more listeners on the response every time a slow reader made it wait).
 */
export async function writable(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return;
  await new Promise<void>((resolve) => {
    const settle = () => {
      res.off('drain', settle);
      res.off('close', settle);
      resolve();
    };
    res.on('drain', settle);
    res.on('close', settle);
  });
}
