import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a handler answers; the emulator kit writes it. */
export interface Reply {
  status: number;
  /** Serialised as JSON unless `raw` is given. Omit for an empty body. */
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface RouteRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The raw body, already read. */
  body: Buffer;
  raw: IncomingMessage;
  res: ServerResponse;
}

export type RouteHandler = (request: RouteRequest) => Reply | Promise<Reply> | 'handled' | Promise<'handled'>;

export interface Route {
  method: string;
  /**
   * `/api/v1/rewards/:id`; a trailing `/` is significant only when written. A path ending in `/*`
   * matches its prefix and everything below it, the rest in `params['*']`.
   */
  path: string;
  handler: RouteHandler;
}

interface CompiledRoute extends Route {
  pattern: RegExp;
  names: string[];
}

export function compileRoutes(routes: readonly Route[]): CompiledRoute[] {
  return routes.map((route) => {
    const names: string[] = [];
    const rest = route.path.endsWith('/*');
    const source = (rest ? route.path.slice(0, -2) : route.path)
      .split('/')
      .map((segment) => {
        if (segment.startsWith(':')) {
          names.push(segment.slice(1));
          return '([^/]+)';
        }
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    if (rest) names.push('*');
    return { ...route, pattern: new RegExp(rest ? `^${source}(/.*)?$` : `^${source}$`), names };
  });
}

export type Match = { route: CompiledRoute; params: Record<string, string> } | { allowed: string[] } | undefined;

/** Finds the route for a method and path; reports the allowed methods when only the method is wrong. */
export function matchRoute(routes: readonly CompiledRoute[], method: string, path: string): Match {
  const allowed: string[] = [];
  for (const route of routes) {
    const found = route.pattern.exec(path);
    if (!found) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    const params: Record<string, string> = {};
    route.names.forEach((name, index) => {
      // The rest of a `/*` path stays as it was sent: it is forwarded, not read.
      params[name] = name === '*' ? (found[index + 1] ?? '') : decodeURIComponent(found[index + 1]!);
    });
    return { route, params };
  }
  return allowed.length ? { allowed } : undefined;
}
