import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer, type BaseContext, type ContextFunction } from '@apollo/server';
import { DEFAULT_MAX_BODY_BYTES, readBody, sendJson, PayloadTooLargeError } from './http.ts';
import { blockedAsCsrf, illFormedVariablesMessage, isJsonContentType } from './requestChecks.ts';

export interface ApolloHandlerOptions<Context extends BaseContext> {
  server: ApolloServer<Context>;
  context: ContextFunction<[{ req: IncomingMessage }], Context>;
  /** @default 1 MiB */
  maxBodyBytes?: number;
  /**
   * Sees a POST's parsed body before Apollo Server does (the fast paths for repeat operations). It
   * either answers the request itself, or lets Apollo Server run it, in the context it hands over
   * when it has already built one. Only a request Apollo Server would itself run gets here: a JSON
   * body (`application/json`) that its CSRF prevention lets through.
   */
  first?(body: unknown, req: IncomingMessage, res: ServerResponse): Promise<FirstOutcome<Context>>;
  /**
   * Sees every request's operation (a POST's body, a GET's URL) before anything else reads it: it
   * lets it through, maybe rewritten (an id replaced by its text), or refuses it with an error
   * sent as it is. The gateway's trusted documents and persisted queries.
   */
  admit?(request: { method: string; body: unknown; url: URL }): Admission;
}

export type Admission = { admitted: { body: unknown; url: URL } } | { refusal: { status: number; headers: Record<string, string>; error: unknown } };

export type FirstOutcome<Context> = { served: true } | { served: false; context?: Context | undefined };

/** The refusal of a body over the limit; the connection closes after it rather than read the rest. */
export function refuseTooLarge(res: ServerResponse, maxBodyBytes: number): void {
  sendJson(res, 413, { errors: [{ message: `request body exceeds ${maxBodyBytes} bytes`, extensions: { code: 'BAD_REQUEST' } }] }, { connection: 'close' });
}

/**
 * Reads a GraphQL request's body (JSON when its type is `application/json`, as Apollo Server's
 * own body parsers read it; else text; nothing for GET). A body over the limit or JSON that does
 * not parse is answered here, and `undefined` returned.
 */
async function readGraphQLBody(req: IncomingMessage, res: ServerResponse, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): Promise<{ body: unknown } | undefined> {
  if (req.method !== 'POST') return { body: undefined };
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBodyBytes);
  } catch (error) {
    if (error instanceof PayloadTooLargeError) {
      refuseTooLarge(res, maxBodyBytes);
    } else {
      res.destroy();
    }
    return undefined;
  }
  if (!isJsonContentType(req.headers['content-type'])) return { body: raw.toString('utf8') };
  try {
    return { body: JSON.parse(raw.toString('utf8')) };
  } catch {
    sendJson(res, 400, { errors: [{ message: 'request body is not valid JSON', extensions: { code: 'BAD_REQUEST' } }] });
    return undefined;
  }
}

/** A GET's variables, when they are JSON (Apollo Server words every other case itself). */
function variablesOfSearch(url: URL): unknown {
  const raw = url.searchParams.get('variables');
  if (!raw || !raw.includes('\\u')) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** A request's headers as Apollo Server takes them. */
export function headerMapOf(incoming: IncomingMessage['headers']): HeaderMap {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/**
 * Apollo Server over plain node:http: no framework in the hot path, and the body limit and
 * JSON errors are ours rather than a middleware's HTML page.
 */
export function apolloHandler<Context extends BaseContext>({ server, context, maxBodyBytes = DEFAULT_MAX_BODY_BYTES, first, admit }: ApolloHandlerOptions<Context>) {
  /** `alreadyRead`: the body, when a transport has read it (and admitted it) already to see what the operation is. */
  return async (req: IncomingMessage, res: ServerResponse, requested: URL, alreadyRead?: { body: unknown; admitted: boolean }): Promise<void> => {
    const read = alreadyRead ?? (await readGraphQLBody(req, res, maxBodyBytes));
    if (!read) return;
    let { body } = read;
    let url = requested;
    if (admit && !alreadyRead?.admitted) {
      const admission = admit({ method: (req.method ?? 'GET').toUpperCase(), body, url });
      if ('refusal' in admission) {
        sendJson(res, admission.refusal.status, { errors: [admission.refusal.error] }, admission.refusal.headers);
        return;
      }
      ({ body, url } = admission.admitted);
    }
    const variables = req.method === 'POST' ? (body as { variables?: unknown } | undefined)?.variables : variablesOfSearch(url);
    const illFormed = illFormedVariablesMessage(variables);
    if (illFormed) {
      sendJson(res, 400, { errors: [{ message: illFormed, extensions: { code: 'BAD_USER_INPUT' } }] });
      return;
    }
    const runsAsApolloWould = req.method === 'POST' && isJsonContentType(req.headers['content-type']) && !blockedAsCsrf(req.headers);
    const outcome = first && runsAsApolloWould ? await first(body, req, res) : undefined;
    if (outcome?.served) return;
    const built = outcome?.context;
    const headers = headerMapOf(req.headers);
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: (req.method ?? 'GET').toUpperCase(), headers, search: url.search, body },
      context: built ? async () => built : () => context({ req }),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
  };
}
