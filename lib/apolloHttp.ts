import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer, type BaseContext, type ContextFunction } from '@apollo/server';
import { readBody, sendJson, PayloadTooLargeError } from './http.ts';

export interface ApolloHandlerOptions<Context extends BaseContext> {
  server: ApolloServer<Context>;
  context: ContextFunction<[{ req: IncomingMessage }], Context>;
  /** @default 1 MiB */
  maxBodyBytes?: number;
  /**
   * Sees a POST's parsed body before Apollo Server does (the fast paths for repeat operations). It
   * either answers the request itself, or lets Apollo Server run it, in the context it hands over
   * when it has already built one.
   */
  first?(body: unknown, req: IncomingMessage, res: ServerResponse): Promise<FirstOutcome<Context>>;
}

export type FirstOutcome<Context> = { served: true } | { served: false; context?: Context | undefined };

/**
 * Reads a GraphQL request's body (JSON when its type says so, else text; nothing for GET). A body
 * over the limit or JSON that does not parse is answered here, and `undefined` returned.
 */
async function readGraphQLBody(req: IncomingMessage, res: ServerResponse, maxBodyBytes = 1024 * 1024): Promise<{ body: unknown } | undefined> {
  if (req.method !== 'POST') return { body: undefined };
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBodyBytes);
  } catch (error) {
    if (error instanceof PayloadTooLargeError) {
      sendJson(res, 413, { errors: [{ message: `request body exceeds ${maxBodyBytes} bytes`, extensions: { code: 'BAD_REQUEST' } }] });
    } else {
      res.destroy();
    }
    return undefined;
  }
  if (!String(req.headers['content-type'] ?? '').includes('json')) return { body: raw.toString('utf8') };
  try {
    return { body: JSON.parse(raw.toString('utf8')) };
  } catch {
    sendJson(res, 400, { errors: [{ message: 'request body is not valid JSON', extensions: { code: 'BAD_REQUEST' } }] });
    return undefined;
  }
}

/**
 * Apollo Server over plain node:http: no framework in the hot path, and the body limit and
 * JSON errors are ours rather than a middleware's HTML page.
 */
export function apolloHandler<Context extends BaseContext>({ server, context, maxBodyBytes = 1024 * 1024, first }: ApolloHandlerOptions<Context>) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const read = await readGraphQLBody(req, res, maxBodyBytes);
    if (!read) return;
    const { body } = read;
    const outcome = first && req.method === 'POST' ? await first(body, req, res) : undefined;
    if (outcome?.served) return;
    const built = outcome?.context;
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
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
