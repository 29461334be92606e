import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLFormattedError, GraphQLSchema, ValidationRule } from 'graphql';
import { refuseTooLarge } from '../../lib/apolloHttp.ts';
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

const refuse = (res: ServerResponse, status: number, message: string, headers?: Record<string, string>) => sendJson(res, status, { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] }, headers);

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
    return void refuse(res, 405, `${transport} takes a GET or a POST`, { allow: 'GET, POST' });
  }
  if (blockedAsCsrf(req.headers)) {
    req.resume();
    return void refuse(res, 400, CSRF_MESSAGE);
  }
  let body: Record<string, unknown> | null = null;
  if (method === 'POST') {
    if (!isJsonContentType(req.headers['content-type'])) {
      req.resume();
      return void refuse(res, 415, `${transport} takes a body of type application/json`);
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) return void refuseTooLarge(res, maxBodyBytes);
      res.destroy();
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      return void refuse(res, 400, 'request body is not valid JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return void refuse(res, 400, 'request body must be a JSON object');
    body = parsed as Record<string, unknown>;
  }
  const admission = trustedDocuments.admitHttp({ method, body, url: new URL(req.url ?? '/', 'http://local') });
  if ('refusal' in admission) {
    const { status, headers, error } = admission.refusal;
    // A 200 would promise a stream: an unknown id is a plain 404 here.
    return void sendJson(res, status === 200 ? 404 : status, { errors: [error] }, headers);
  }
  const admittedBody = admission.admitted.body as Record<string, unknown> | null;
  const url = admission.admitted.url;
  const params = admittedBody ?? paramsOfSearch(url);
  const shape = requestShapeError(params);
  if (shape) return void refuse(res, 400, shape);
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
