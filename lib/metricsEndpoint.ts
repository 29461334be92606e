import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { sendJson, sendText } from './http.ts';
import { secretMatches } from './secretMatches.ts';

export interface MetricsEndpointOptions {
  /** When set, `/metrics` answers only `Authorization: Bearer <token>` (METRICS_TOKEN). */
  token?: string | undefined;
  /** Renders of the registry in any one second; past it, the newest render is served again. @default 20 */
  maxRendersPerSecond?: number;
  /** @default Date.now */
  now?: () => number;
}

type Rendering = Pick<Registry, 'metrics' | 'contentType'>;

/** Renders of a registry in any one second, by default. */
export const MAX_RENDERS_PER_SECOND = 20;

/**
 * `/metrics` for one registry. Rendering it costs a millisecond or two of CPU, and the route is on
 * the public port: a client asking for it in a loop would otherwise spend a core. Renders are
 * bounded per second (a scraper asks every few seconds, and a test that polls still sees each new
 * value within a second), concurrent requests share one render, and an operator can require a
 * bearer token, compared in constant time.
 */
export function createMetricsEndpoint(registry: Rendering, { token, maxRendersPerSecond = MAX_RENDERS_PER_SECOND, now = Date.now }: MetricsEndpointOptions = {}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const expected = token ? `Bearer ${token}` : undefined;
  let rendering: Promise<string> | undefined;
  let newest: { text: string; at: number } | undefined;
  /** When each render of the last second started. */
  const recent: number[] = [];

  const render = (): Promise<string> => {
    const at = now();
    while (recent.length > 0 && recent[0]! <= at - 1000) recent.shift();
    if (rendering) return rendering;
    if (recent.length >= maxRendersPerSecond && newest && newest.at > at - 1000) return Promise.resolve(newest.text);
    recent.push(at);
    rendering = registry.metrics().then(
      (text) => {
        newest = { text, at };
        rendering = undefined;
        return text;
      },
      (error: unknown) => {
        rendering = undefined;
        throw error;
      },
    );
    return rendering;
  };

  return async (req, res) => {
    if (expected) {
      const given = req.headers.authorization;
      if (typeof given !== 'string' || !secretMatches(given, expected)) {
        return sendJson(res, 401, { message: 'metrics need the bearer token the operator set (METRICS_TOKEN)' }, { 'www-authenticate': 'Bearer realm="metrics"' });
      }
    }
    sendText(res, 200, await render(), registry.contentType);
  };
}
