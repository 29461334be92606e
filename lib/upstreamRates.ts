/**
 * The request rates the REST services publish, written once: the subgraphs pace their calls under
 * them (subgraphs/kit/pacing.ts) and the emulators refuse what goes over them
 * (emulators/kit/throttle.ts), so the two cannot drift apart. Sources: docs/LIMITS.md
 * ("Upstream pacing") and each service's page under docs/services/.
 */

export interface RateClass {
  /** The class's name, a metric label (`products`, `other`). */
  name: string;
  /** Requests allowed in any window of `perMs`. */
  requests: number;
  perMs: number;
  /** First path segments (below the service's base URL) the class covers; absent: every path no other class covers. */
  segments?: readonly string[];
}

export interface ServiceRates {
  /**
   * Request headers (lower case) whose value names the caller the limit counts per; the first one a
   * request carries is used.
   */
  callerHeaders: readonly string[];
  /** The classes, the catch-all (no `segments`) last. */
  classes: readonly RateClass[];
}

export const PUBLISHED_RATES: Readonly<Record<string, ServiceRates>> = {
  // "The request limit on Skyhub is per endpoint and per API": products 9/s, orders 9/s, every
  // other endpoint 1/s. Whether "other" is one budget or one per endpoint is not said: one budget
  // for all of them is the reading that can never provoke a 429.
  marketplace: {
    callerHeaders: ['x-user-token', 'x-api-key'],
    classes: [
      { name: 'products', requests: 9, perMs: 1000, segments: ['products'] },
      { name: 'orders', requests: 9, perMs: 1000, segments: ['orders'] },
      { name: 'other', requests: 1, perMs: 1000 },
    ],
  },
  // 100 requests a second per account; the account is known only by its bearer token.
  messaging: {
    callerHeaders: ['authorization'],
    classes: [{ name: 'account', requests: 100, perMs: 1000 }],
  },
};

/** The first segment of a path below the base URL (`/products/SKU-1?x` → `products`); an absolute URL is read by its path. */
function firstSegment(path: string): string {
  const pathname = /^https?:\/\//i.test(path) ? new URL(path).pathname : path;
  const start = pathname.startsWith('/') ? 1 : 0;
  const end = pathname.slice(start).search(/[/?#]/);
  return end < 0 ? pathname.slice(start) : pathname.slice(start, start + end);
}

/** The class a request to `path` counts in; a path no class names counts in the catch-all, the strictest. */
export function rateClassOf(rates: ServiceRates, path: string): RateClass {
  const segment = firstSegment(path);
  return rates.classes.find((candidate) => candidate.segments?.includes(segment)) ?? rates.classes[rates.classes.length - 1]!;
}

/** The value naming the caller the limit counts per, from a request's headers; undefined when it carries none. */
export function callerOf(rates: ServiceRates, headers: Readonly<Record<string, string | string[] | undefined>> | undefined): string | undefined {
  if (!headers) return undefined;
  for (const name of rates.callerHeaders) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first) return first;
  }
  return undefined;
}
