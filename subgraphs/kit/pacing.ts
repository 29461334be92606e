import { createHmac, randomBytes } from 'node:crypto';
import { Counter, Histogram, type Registry } from 'prom-client';
import { readBoolean, readInt, type Env } from '../../lib/config.ts';
import { callerOf, rateClassOf, type RateClass, type ServiceRates } from '../../lib/upstreamRates.ts';
import { cancelledCall } from './callScope.ts';
import { ErrorCode, graphError } from './errors.ts';
import type { DeadlineClock, RestCall } from './transport.ts';

/** How a subgraph paces its calls under its service's published rates (`UPSTREAM_PACING*`). */
export interface PacingSettings {
  /** Off: calls go out as they come, and the service's own 429s are the only limit. @default true */
  enabled: boolean;
  /** The share of each published rate this process uses, in percent: replicas sharing a credential split it. @default 90 */
  sharePercent: number;
  /** Calls one credential may have waiting in one class; past it, `RATE_LIMITED` at once. @default 100 */
  maxQueue: number;
}

export function readPacingSettings(env: Env): PacingSettings {
  return {
    enabled: readBoolean(env, 'UPSTREAM_PACING', true),
    sharePercent: readInt(env, 'UPSTREAM_PACING_SHARE_PERCENT', 90, { min: 1, max: 100 }),
    maxQueue: readInt(env, 'UPSTREAM_PACING_MAX_QUEUE', 100, { min: 0, max: 100_000 }),
  };
}

export interface UpstreamPacerOptions {
  service: string;
  rates: ServiceRates;
  settings: PacingSettings;
  /** The clock the waits run on; tests pass one they move by hand. */
  clock: DeadlineClock;
  /** Where the pacing metrics go (the subgraph's `/metrics`). */
  registry?: Registry;
}

/**
 * Waits, when the service's rate asks for it, until `call` may be sent; resolves at once (or
 * returns nothing) when it may go now. Rejects with `RATE_LIMITED` when the wait would end after
 * `deadlineAt` or the queue is full, and with the cancelled-call error when the request goes away.
 */
export type Pace = (call: RestCall, deadlineAt: number) => Promise<void> | undefined;

interface Waiter {
  queuedAt: number;
  go(): void;
  unwatch(): void;
}

/** One caller's calls in one class: when the last `requests` of them started, and who waits. */
interface Lane {
  rateClass: RateClass;
  starts: number[];
  queue: Waiter[];
  cancelTimer: (() => void) | undefined;
}

interface ClassSeries {
  paced: { inc(): void };
  waited: { observe(seconds: number): void };
  refused: Record<'deadline' | 'queue', { inc(): void }>;
}

/**
 * Paces one service's calls per caller and rate class, as a sliding window: a call starts only
 * when fewer than `requests` calls of its lane started in the last window. That holds the rate in
 * every window, however the service counts (fixed windows, sliding windows, token buckets), and
 * lets a burst of up to `requests` go at once. Calls that must wait queue FIFO; each is admitted
 * only if its turn comes before its deadline, so a wait never ends in a timeout. The window is
 * stretched by `100 / sharePercent`: the margin absorbs the network's jitter between two calls.
 *
 * Lanes are keyed by an HMAC of the caller's credential under a key drawn at start: no credential
 * is ever a key, a label or a line of a log.
 */
export function createUpstreamPacer({ service, rates, settings, clock, registry }: UpstreamPacerOptions): Pace {
  const secret = randomBytes(32);
  const lanes = new Map<string, Lane>();
  const stretch = 100 / settings.sharePercent;
  const windowOf = (rateClass: RateClass) => Math.ceil(rateClass.perMs * stretch);
  let sweepAt = 1024;

  const metrics = registry ? classMetrics(service, registry) : undefined;
  const seriesByClass = new Map<string, ClassSeries | undefined>();
  const seriesOf = (rateClass: RateClass) => {
    if (!seriesByClass.has(rateClass.name)) seriesByClass.set(rateClass.name, metrics?.(rateClass.name));
    return seriesByClass.get(rateClass.name);
  };

  /** When the next call of `lane` may start, given the starts recorded so far. */
  const nextSlot = (lane: Lane, now: number) =>
    lane.starts.length < lane.rateClass.requests ? now : Math.max(now, lane.starts[lane.starts.length - lane.rateClass.requests]! + windowOf(lane.rateClass));

  function record(lane: Lane, at: number) {
    lane.starts.push(at);
    if (lane.starts.length > lane.rateClass.requests) lane.starts.shift();
  }

  /** When a call joining the tail of the queue now would start. */
  function tailSlot(lane: Lane, now: number): number {
    const { requests } = lane.rateClass;
    const window = windowOf(lane.rateClass);
    const times = [...lane.starts];
    let at = now;
    for (let position = 0; position <= lane.queue.length; position += 1) {
      at = times.length < requests ? now : Math.max(now, times[times.length - requests]! + window);
      times.push(at);
    }
    return at;
  }

  function release(lane: Lane) {
    lane.cancelTimer = undefined;
    const now = clock.now();
    while (lane.queue.length > 0 && nextSlot(lane, now) <= now) {
      const waiter = lane.queue.shift()!;
      record(lane, now);
      waiter.unwatch();
      const series = seriesOf(lane.rateClass);
      series?.paced.inc();
      series?.waited.observe((now - waiter.queuedAt) / 1000);
      waiter.go();
    }
    arm(lane);
  }

  function arm(lane: Lane) {
    if (lane.cancelTimer || lane.queue.length === 0) return;
    const now = clock.now();
    lane.cancelTimer = clock.after(Math.max(0, nextSlot(lane, now) - now), () => release(lane));
  }

  /** Forgets lanes that hold nothing a later call needs: none waiting, none started within a window. */
  function sweep(now: number) {
    for (const [key, lane] of lanes) {
      if (lane.queue.length === 0 && (lane.starts.length === 0 || lane.starts[lane.starts.length - 1]! + windowOf(lane.rateClass) <= now)) lanes.delete(key);
    }
    sweepAt = Math.max(1024, lanes.size * 2);
  }

  function laneOf(rateClass: RateClass, caller: string, now: number): Lane {
    const key = `${rateClass.name}\u0000${createHmac('sha256', secret).update(caller).digest('base64url')}`;
    let lane = lanes.get(key);
    if (!lane) {
      if (lanes.size >= sweepAt) sweep(now);
      lane = { rateClass, starts: [], queue: [], cancelTimer: undefined };
      lanes.set(key, lane);
    }
    return lane;
  }

  function refuse(lane: Lane, reason: 'deadline' | 'queue', waitMs: number) {
    seriesOf(lane.rateClass)?.refused[reason].inc();
    const { name, requests, perMs } = lane.rateClass;
    const rate = `${requests} request${requests === 1 ? '' : 's'} per ${perMs === 1000 ? 'second' : `${perMs} ms`}`;
    const why = reason === 'deadline' ? 'the wait for its turn would pass the deadline' : 'too many calls are already waiting';
    return graphError(`${service} was not called: it allows ${rate} (${name}) for this credential, and ${why}`, {
      code: ErrorCode.RateLimited,
      service,
      retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    });
  }

  return (call, deadlineAt) => {
    const now = clock.now();
    const lane = laneOf(rateClassOf(rates, call.path), callerOf(rates, call.headers) ?? '', now);
    if (lane.queue.length === 0 && nextSlot(lane, now) <= now) {
      record(lane, now);
      return undefined;
    }
    const at = tailSlot(lane, now);
    if (lane.queue.length >= settings.maxQueue) throw refuse(lane, 'queue', at - now);
    if (at > deadlineAt) throw refuse(lane, 'deadline', at - now);
    const scope = call.scope;
    if (scope?.signal.aborted) throw cancelledCall(service);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { queuedAt: now, go: resolve, unwatch: () => {} };
      lane.queue.push(waiter);
      if (scope) {
        waiter.unwatch = scope.watch(() => {
          // Gone from the queue: the calls behind it move up.
          lane.queue.splice(lane.queue.indexOf(waiter), 1);
          reject(cancelledCall(service));
        });
      }
      arm(lane);
    });
  };
}

/** The pacing metrics of one service; labels are the service and the rate class, never a caller. */
function classMetrics(service: string, registry: Registry) {
  const paced = new Counter({
    name: `${service}_upstream_paced_total`,
    help: 'Upstream calls that waited for their turn under the service\'s published rate, by rate class',
    labelNames: ['service', 'class'] as const,
    registers: [registry],
  });
  const waited = new Histogram({
    name: `${service}_upstream_pacing_wait_seconds`,
    help: 'How long paced upstream calls waited for their turn, by rate class',
    labelNames: ['service', 'class'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  const refused = new Counter({
    name: `${service}_upstream_pacing_refused_total`,
    help: 'Upstream calls refused with RATE_LIMITED before they were sent: their turn would come after their deadline, or their queue was full',
    labelNames: ['service', 'class', 'reason'] as const,
    registers: [registry],
  });
  return (name: string): ClassSeries => ({
    paced: paced.labels({ service, class: name }),
    waited: waited.labels({ service, class: name }),
    refused: { deadline: refused.labels({ service, class: name, reason: 'deadline' }), queue: refused.labels({ service, class: name, reason: 'queue' }) },
  });
}
