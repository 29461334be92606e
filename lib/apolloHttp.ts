import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer, type BaseContext, type ContextFunction } from '@apollo/server';
import { readBody, sendJson, PayloadTooLargeError } from './http.ts';

export interface ApolloHandlerOptions<Context extends BaseContext> {
  server: ApolloServer<Context>;
  context: ContextFunction<[{ req: IncomingMessage }], Context>;
  /** @default 1 MiB */
  maxBodyBytes?: number;
}

/**
 * Apollo Server over plain node:http: no framework in the hot path, and the body limit and
 * JSON errors are ours rather than a middleware's HTML page.
 */
export function apolloHandler<Context extends BaseContext>({ server, context, maxBodyBytes = 1024 * 1024 }: ApolloHandlerOptions<Context>) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    let body: unknown;
    if (req.method === 'POST') {
      let raw: Buffer;
      try {
        raw = await readBody(req, maxBodyBytes);
      } catch (error) {
        if (error instanceof PayloadTooLargeError) {
          sendJson(res, 413, { errors: [{ message: `request body exceeds ${maxBodyBytes} bytes`, extensions: { code: 'BAD_REQUEST' } }] });
        } else {
          res.destroy();
        }
        return;
      }
      const type = String(req.headers['content-type'] ?? '');
      if (type.includes('json')) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          sendJson(res, 400, { errors: [{ message: 'request body is not valid JSON', extensions: { code: 'BAD_REQUEST' } }] });
          return;
        }
      } else {
        body = raw.toString('utf8');
      }
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: (req.method ?? 'GET').toUpperCase(), headers, search: url.search, body },
      context: () => context({ req }),
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
