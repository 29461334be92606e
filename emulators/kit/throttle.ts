import { createHash } from 'node:crypto';
import { readBoolean, type Env } from '../../lib/config.ts';
import { callerOf, rateClassOf, type ServiceRates } from '../../lib/upstreamRates.ts';
import type { Reply } from './router.ts';

/** What the throttle reads of a request. */
export interface ThrottledRequest {
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface EmulatorThrottle {
  /** The service's refusal when the request is over its caller's rate; undefined when it may be served. */
  (request: ThrottledRequest): Reply | undefined;
}

/** `EMULATOR_RATE_LIMITS`: the emulators refuse what goes over the published rates (on) or serve everything (off). */
export function readEmulatorRateLimits(env: Env): boolean {
  return readBoolean(env, 'EMULATOR_RATE_LIMITS', true);
}

export interface ThrottleOptions {
  rates: ServiceRates;
  now(): number;
  /** The service's own 429, in its words; `retryAfterSeconds` goes in its `Retry-After` too. */
  refusal(retryAfterSeconds: number): Reply;
}

/**
 * The published rates as the strictest reading of "N requests per second" enforces them: at most
 * N requests of one caller and class in any window of a second, counted on arrival. Requests it
 * refuses are not counted (they were not served). `reset` forgets every window.
 */
export function createThrottle({ rates, now, refusal }: ThrottleOptions): EmulatorThrottle & { reset(): void } {
  const windows = new Map<string, number[]>();
  const throttle = (request: ThrottledRequest): Reply | undefined => {
    const caller = callerOf(rates, request.headers);
    // Unauthenticated requests are refused with a 401 before any rate is counted.
    if (caller === undefined) return undefined;
    const rateClass = rateClassOf(rates, request.path);
    const key = `${rateClass.name}\u0000${createHash('sha256').update(caller).digest('base64url')}`;
    const at = now();
    const arrivals = (windows.get(key) ?? []).filter((arrival) => arrival > at - rateClass.perMs);
    if (arrivals.length >= rateClass.requests) {
      windows.set(key, arrivals);
      const retryAfterSeconds = Math.max(1, Math.ceil((arrivals[0]! + rateClass.perMs - at) / 1000));
      const reply = refusal(retryAfterSeconds);
      return { ...reply, headers: { ...reply.headers, 'retry-after': String(retryAfterSeconds) } };
    }
    arrivals.push(at);
    windows.set(key, arrivals);
    return undefined;
  };
  return Object.assign(throttle, { reset: () => windows.clear() });
}
