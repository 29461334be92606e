import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, readBody, requestUrl, sendJson, PayloadTooLargeError, type Started } from '../../lib/http.ts';
import { redactQuery } from '../../lib/redact.ts';
import { compileRoutes, matchRoute, type Reply, type Route, type RouteRequest } from './router.ts';
import { jsonBody } from './bodies.ts';
import type { EmulatorThrottle } from './throttle.ts';

/** One line of the request log: enough to prove batching and header routing, never a secret. */
export interface LoggedRequest {
  method: string;
  path: string;
  /** Query parameters with credential values masked. */
  query: Record<string, string>;
  /** Header names only, in lower case. */
  headers: string[];
  status: number;
  /** True when no route matched: tests assert nothing unexpected was called. */
  unmatched?: boolean;
  at: string;
}

/** An injected failure, applied before the route's handler. */
export interface Fault {
  /** Exact path, or a prefix ending in `*`; `*` alone matches every path. */
  path: string;
  /** Only this method; every method when absent. */
  method?: string;
  /** Answer with this status instead of the handler. */
  status?: number;
  /** JSON body for `status`; empty when absent. */
  body?: unknown;
  /** A raw body for `status` instead of JSON, with its content type. */
  raw?: string;
  contentType?: string;
  /** Delay before answering (or before the handler, when no status is set). */
  latencyMs?: number;
  /** Destroy the connection without answering. */
  drop?: boolean;
  /** How many requests it applies to; every request when absent. */
  times?: number;
}

/** A controllable clock, so expiry can be tested without sleeping. */
export interface EmulatorClock {
  now(): number;
  advance(ms: number): void;
  reset(): void;
}

export interface EmulatorDefinition {
  name: string;
  routes: Route[];
  /** Extra control routes, mounted under `/__emulator/`. */
  controls?: Route[];
  /** Restores the seeded state. */
  reset(): void;
  /** The clock the service's handlers read; the control surface moves it. */
  clock?: EmulatorClock;
  /** Stops background work (pending webhook deliveries) when the emulator closes. */
  dispose?(): void;
  /**
   * The real service's dialect: rewrites a handler's reply the way the real service answers where
   * it deviates from the spec (envelopes, body shapes, error bodies). Off until
   * `POST /__emulator/dialect {"real": true}`; a reset restores the spec's dialect.
   */
  realDialect?(reply: Reply, request: RouteRequest): Reply;
  /** The service's published request rates, refused past them with its 429 before any route runs (`emulators/kit/throttle.ts`). */
  throttle?: EmulatorThrottle;
}

/** Which dialect an emulator answers in. */
export type Dialect = 'spec' | 'real';

export interface Emulator {
  server: http.Server;
  clock: EmulatorClock;
  requests(): LoggedRequest[];
}

const MAX_LOGGED = 20_000;
const MAX_BODY = 10 * 1024 * 1024;

/**
 * The newest `capacity` requests. A full log overwrites its oldest entry in place: shifting an
 * array of 20,000 on every request made logging cost more than the service's own handlers, and
 * the floor the benchmark measures must be the service, not its control surface.
 */
export function createRequestLog(capacity: number) {
  let entries: LoggedRequest[] = [];
  let oldest = 0;
  return {
    add(entry: LoggedRequest): void {
      if (entries.length < capacity) {
        entries.push(entry);
        return;
      }
      entries[oldest] = entry;
      oldest = (oldest + 1) % capacity;
    },
    /** Oldest first. */
    list(): LoggedRequest[] {
      return oldest === 0 ? entries : [...entries.slice(oldest), ...entries.slice(0, oldest)];
    },
    clear(): void {
      entries = [];
      oldest = 0;
    },
  };
}

export function createClock(): EmulatorClock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
    reset: () => {
      offset = 0;
    },
  };
}

function faultMatches(fault: Fault, method: string, path: string): boolean {
  if (fault.method && fault.method.toUpperCase() !== method) return false;
  if (fault.path === '*') return true;
  return fault.path.endsWith('*') ? path.startsWith(fault.path.slice(0, -1)) : fault.path === path;
}

function writeReply(res: ServerResponse, reply: Reply): void {
  if (reply.raw !== undefined) {
    const raw = typeof reply.raw === 'string' ? Buffer.from(reply.raw) : reply.raw;
    res.writeHead(reply.status, { 'content-length': raw.length, ...reply.headers });
    res.end(raw);
    return;
  }
  sendJson(res, reply.status, reply.body, reply.headers);
}

/**
 * The shared shape of every emulator: the service's routes, a request log, fault injection,
 * a clock and a reset, with the control surface under `/__emulator/`.
 */
function createEmulator(definition: EmulatorDefinition): Emulator {
  const clock = definition.clock ?? createClock();
  const routes = compileRoutes(definition.routes);
  const log = createRequestLog(MAX_LOGGED);
  let faults: Fault[] = [];
  let dialect: Dialect = 'spec';

  const controlRoutes = compileRoutes([
    {
      method: 'POST',
      path: '/__emulator/reset',
      handler: () => {
        log.clear();
        faults = [];
        clock.reset();
        dialect = 'spec';
        definition.reset();
        return { status: 200, body: { reset: true } };
      },
    },
    { method: 'GET', path: '/__emulator/requests', handler: () => ({ status: 200, body: log.list() }) },
    {
      method: 'DELETE',
      path: '/__emulator/requests',
      handler: () => {
        log.clear();
        return { status: 200, body: { cleared: true } };
      },
    },
    {
      method: 'GET',
      path: '/__emulator/counters',
      handler: () => {
        const entries = log.list();
        const byRoute: Record<string, number> = {};
        for (const entry of entries) byRoute[`${entry.method} ${entry.path}`] = (byRoute[`${entry.method} ${entry.path}`] ?? 0) + 1;
        return { status: 200, body: { total: entries.length, byRoute } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/faults',
      handler: (request) => {
        const fault = jsonBody(request) as Fault | undefined;
        if (!fault || typeof fault.path !== 'string') {
          return { status: 400, body: { message: 'a fault needs at least {"path": "/api/..."}' } };
        }
        faults.push(fault);
        return { status: 201, body: { faults } };
      },
    },
    {
      method: 'DELETE',
      path: '/__emulator/faults',
      handler: () => {
        faults = [];
        return { status: 200, body: { faults } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/clock',
      handler: (request) => {
        const body = jsonBody(request) as { advanceMs?: unknown } | undefined;
        if (typeof body?.advanceMs !== 'number') return { status: 400, body: { message: 'expected {"advanceMs": number}' } };
        clock.advance(body.advanceMs);
        return { status: 200, body: { now: new Date(clock.now()).toISOString() } };
      },
    },
    { method: 'GET', path: '/__emulator/dialect', handler: () => ({ status: 200, body: { dialect, real: dialect === 'real' } }) },
    {
      method: 'POST',
      path: '/__emulator/dialect',
      handler: (request) => {
        const body = jsonBody(request) as { real?: unknown } | undefined;
        if (typeof body?.real !== 'boolean') return { status: 400, body: { message: 'expected {"real": true|false}' } };
        if (body.real && !definition.realDialect) return { status: 501, body: { message: `the ${definition.name} emulator speaks only its spec's dialect` } };
        dialect = body.real ? 'real' : 'spec';
        return { status: 200, body: { dialect, real: body.real } };
      },
    },
    ...(definition.controls ?? []),
  ]);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req);
    const method = (req.method ?? 'GET').toUpperCase();
    if (!url) {
      sendJson(res, 400, { message: 'bad request target' });
      return;
    }
    let body: Buffer;
    try {
      body = await readBody(req, MAX_BODY);
    } catch (error) {
      sendJson(res, error instanceof PayloadTooLargeError ? 413 : 400, { message: String((error as Error).message) });
      return;
    }
    const path = url.pathname;

    if (path.startsWith('/__emulator/')) {
      const match = matchRoute(controlRoutes, method, path);
      if (!match || !('route' in match)) {
        sendJson(res, 404, { message: `no control route ${method} ${path}` });
        return;
      }
      const reply = await match.route.handler({ method, path, params: match.params, query: url.searchParams, headers: req.headers, body, raw: req, res });
      if (reply !== 'handled') writeReply(res, reply);
      return;
    }

    const entry: LoggedRequest = {
      method,
      path,
      query: redactQuery(url.searchParams),
      headers: Object.keys(req.headers).map((name) => name.toLowerCase()),
      status: 0,
      at: new Date(clock.now()).toISOString(),
    };
    log.add(entry);

    // The service's rate limiter stands in front of it: an injected failure is a request it counted.
    const throttled = definition.throttle?.({ path, headers: req.headers });
    if (throttled) {
      const reply = dialect === 'real' && definition.realDialect ? definition.realDialect(throttled, { method, path, params: {}, query: url.searchParams, headers: req.headers, body, raw: req, res }) : throttled;
      entry.status = reply.status;
      writeReply(res, reply);
      return;
    }
    const fault = faults.find((candidate) => faultMatches(candidate, method, path));
    if (fault) {
      if (fault.times !== undefined) {
        fault.times -= 1;
        if (fault.times <= 0) faults = faults.filter((candidate) => candidate !== fault);
      }
      if (fault.latencyMs) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs));
      if (fault.drop) {
        entry.status = -1;
        req.socket.destroy();
        return;
      }
      if (fault.status !== undefined) {
        entry.status = fault.status;
        writeReply(res, fault.raw !== undefined ? { status: fault.status, raw: fault.raw, headers: { 'content-type': fault.contentType ?? 'text/plain' } } : { status: fault.status, body: fault.body });
        return;
      }
    }

    const match = matchRoute(routes, method, path);
    if (!match) {
      entry.status = 404;
      entry.unmatched = true;
      sendJson(res, 404, { message: `${definition.name} emulator has no route ${method} ${path}` });
      return;
    }
    if (!('route' in match)) {
      entry.status = 405;
      entry.unmatched = true;
      sendJson(res, 405, { message: `${method} is not allowed on ${path}` }, { allow: match.allowed.join(', ') });
      return;
    }
    const request: RouteRequest = { method, path, params: match.params, query: url.searchParams, headers: req.headers, body, raw: req, res };
    const handled = await match.route.handler(request);
    if (handled === 'handled') {
      entry.status = res.statusCode;
      return;
    }
    const reply = dialect === 'real' && definition.realDialect ? definition.realDialect(handled, request) : handled;
    entry.status = reply.status;
    writeReply(res, reply);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // An emulator bug must be loud in tests, not a hung request.
      console.error(`${definition.name} emulator failed`, error);
      if (!res.headersSent) sendJson(res, 500, { message: 'emulator error' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;

  return { server, clock, requests: () => log.list() };
}

export async function startEmulator(definition: EmulatorDefinition, port: number, host?: string): Promise<Started & { emulator: Emulator }> {
  const emulator = createEmulator(definition);
  const started = await listen(emulator.server, port, host);
  return {
    ...started,
    emulator,
    close: async () => {
      definition.dispose?.();
      await started.close();
    },
  };
}
