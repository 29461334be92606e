import { Counter, Histogram, type Registry } from 'prom-client';
import { readBoolean, readInt, type Env } from '../../lib/config.ts';
import { callerOf, rateClassOf, type RateClass, type ServiceRates } from '../../lib/upstreamRates.ts';
import { cancelledCall, type CallScope } from './callScope.ts';
import { ErrorCode, graphError } from './errors.ts';
import { callerKeyOf, type RestCall } from './transport.ts';
import type { DeadlineClock } from '../../lib/deadlines.ts';

/** How a subgraph paces its calls under its service's published rates (`UPSTREAM_PACING*`). */
export interface PacingSettings {
  /** Off: calls go out as they come, and the service's own 429s are the only limit. @default true */
  enabled: boolean;
  /** The share of each published rate this process uses, in percent: replicas sharing a credential split it. @default 100 */
  sharePercent: number;
  /** Calls one credential may have waiting in one class; past it, `RATE_LIMITED` at once. @default 100 */
  maxQueue: number;
}

export function readPacingSettings(env: Env): PacingSettings {
  return {
    enabled: readBoolean(env, 'UPSTREAM_PACING', true),
    sharePercent: readInt(env, 'UPSTREAM_PACING_SHARE_PERCENT', 100, { min: 1, max: 100 }),
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
  /** The metrics series by rate class, when another pacer of this service registered them already. */
  series?: PacingSeries;
}

/** The pacing metrics of one rate class, undefined when there is no registry. */
export type PacingSeries = (rateClass: RateClass) => ClassSeries | undefined;

/** One service's pacing metrics, each class's series looked up once. */
export function pacingMetrics(service: string, registry: Registry | undefined): PacingSeries {
  const metrics = registry ? classMetrics(service, registry) : undefined;
  const seriesByClass = new Map<string, ClassSeries | undefined>();
  return (rateClass) => {
    if (!seriesByClass.has(rateClass.name)) seriesByClass.set(rateClass.name, metrics?.(rateClass.name));
    return seriesByClass.get(rateClass.name);
  };
}

/** `RATE_LIMITED` for a call not sent: its turn would pass its deadline, or its queue is full. Counted. */
export function pacingRefusal(service: string, rateClass: RateClass, reason: 'deadline' | 'queue', waitMs: number, series: ClassSeries | undefined): Error {
  series?.refused[reason].inc();
  const { name, requests, perMs } = rateClass;
  const rate = `${requests} request${requests === 1 ? '' : 's'} per ${perMs === 1000 ? 'second' : `${perMs} ms`}`;
  const why = reason === 'deadline' ? 'the wait for its turn would pass the deadline' : 'too many calls are already waiting';
  return graphError(`${service} was not called: it allows ${rate} (${name}) for this credential, and ${why}`, {
    code: ErrorCode.RateLimited,
    service,
    retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
  });
}

/** Called once the attempt is over, with the status it was answered with: its slot starts cooling down. */
export type PacedCall = (status?: number) => void;

/**
 * Waits, when the service's rate asks for it, until `call` may be sent, and hands back what to
 * call once the attempt is over; returns it at once when the call may go now. Throws (or rejects)
 * with `RATE_LIMITED` when its turn would come after `deadlineAt` or its queue is full, and with
 * the cancelled-call error when the request goes away while it waits.
 */
export type Pace = (call: RestCall, deadlineAt: number) => PacedCall | Promise<PacedCall>;

/** A call waiting for its turn in a lane's queue. */
export interface Waiter {
  queuedAt: number;
  deadlineAt: number;
  go(finished: PacedCall): void;
  /** Stops watching the request's cancellation and the deadline. */
  forget(): void;
  /** Hands the call over to the fallback it was queued with (the shared pacer's: this process's own pacer). */
  divert(): void;
}

/**
 * Queues a call until its turn: it leaves the queue with the deadline's refusal when its deadline
 * passes while it waits (calls in flight took longer than estimated), and with the cancelled-call
 * error when its request goes away. `moved` is told each time the queue changes.
 */
export function waitInQueue(
  queue: Waiter[],
  { clock, deadlineAt, scope, service, refusal, moved, fallback }: { clock: DeadlineClock; deadlineAt: number; scope: CallScope | undefined; service: string; refusal: () => Error; moved: () => void; fallback?: () => PacedCall | Promise<PacedCall> },
): Promise<PacedCall> {
  return new Promise<PacedCall>((resolve, reject) => {
    const watching: (() => void)[] = [];
    const waiter: Waiter = {
      queuedAt: clock.now(),
      deadlineAt,
      go: resolve,
      forget: () => {
        for (const stop of watching.splice(0)) stop();
      },
      divert: () => {
        waiter.forget();
        if (fallback) Promise.resolve().then(fallback).then(resolve, reject);
        else reject(new Error('no other way to pace this call'));
      },
    };
    const leave = (error: Error) => {
      waiter.forget();
      // Gone from the queue: the calls behind it move up.
      const position = queue.indexOf(waiter);
      if (position >= 0) queue.splice(position, 1);
      reject(error);
      moved();
    };
    queue.push(waiter);
    watching.push(clock.after(Math.max(0, deadlineAt - clock.now()), () => leave(refusal())));
    if (scope) watching.push(scope.watch(() => leave(cancelledCall(service))));
    moved();
  });
}

/** One caller's calls in one class. */
interface Lane {
  rateClass: RateClass;
  /** Calls sent and not yet over. */
  inFlight: number;
  /** When the slots of calls already over are free again, oldest first. */
  coolingUntil: number[];
  /** After a 429 nothing is sent until then: a new window, as the marketplace asks. */
  pausedUntil: number;
  queue: Waiter[];
  cancelTimer: (() => void) | undefined;
}

export interface ClassSeries {
  paced: { inc(): void };
  waited: { observe(seconds: number): void };
  refused: Record<'deadline' | 'queue', { inc(): void }>;
}

/**
 * Paces one service's calls per caller and rate class. A class allowing N requests a window has
 * N slots; a call holds one from the moment it is sent until a window after its answer came back.
 * Its request reached the service somewhere in between, so however late the connection pool or the
 * network delivered it, no window on the service's clock ever sees more than N: the rate holds
 * however the service counts (fixed windows, sliding windows, token buckets). A burst of up to N
 * goes at once. Calls that must wait queue first in, first out; each is admitted only if its turn,
 * estimated as if the calls in flight ended now, comes before its deadline, and leaves the queue
 * with `RATE_LIMITED` should the deadline pass all the same. The window is stretched by
 * `100 / sharePercent`, for replicas that share a credential.
 *
 * Lanes are keyed by a hash of a secret drawn at start and the caller's credential, the one the
 * connection gate knows the caller by (`callerKeyOf`, made once per request): no credential is
 * ever a key, a label or a line of a log. Calls with no caller header share one lane here (the
 * gate tells them apart by their credential).
 */
export function createUpstreamPacer({ service, rates, settings, clock, registry, series }: UpstreamPacerOptions): Pace {
  const lanes = new Map<string, Lane>();
  const stretch = 100 / settings.sharePercent;
  const windowOf = (rateClass: RateClass) => Math.ceil(rateClass.perMs * stretch);
  let sweepAt = 1024;

  const seriesOf = series ?? pacingMetrics(service, registry);

  /** Slots in use at `now`: calls in flight, and calls over less than a window ago. */
  function busy(lane: Lane, now: number): number {
    if (now < lane.pausedUntil) return lane.rateClass.requests;
    while (lane.coolingUntil.length > 0 && lane.coolingUntil[0]! <= now) lane.coolingUntil.shift();
    return lane.inFlight + lane.coolingUntil.length;
  }

  /** Takes a slot; the returned function gives it back, to cool down for a window. */
  function start(lane: Lane): PacedCall {
    lane.inFlight += 1;
    let over = false;
    return (status) => {
      if (over) return;
      over = true;
      lane.inFlight -= 1;
      const until = clock.now() + windowOf(lane.rateClass);
      // Refused all the same (another client on the credential, a stricter count): wait a whole window.
      if (status === 429) lane.pausedUntil = Math.max(lane.pausedUntil, until);
      // Calls end in any order: keep the list sorted (it holds at most N).
      let index = lane.coolingUntil.length;
      while (index > 0 && lane.coolingUntil[index - 1]! > until) index -= 1;
      lane.coolingUntil.splice(index, 0, until);
      arm(lane);
    };
  }

  /** When a call joining the tail of the queue now would start, if the calls in flight ended now. */
  function tailSlot(lane: Lane, now: number): number {
    const window = windowOf(lane.rateClass);
    const free: number[] = [...lane.coolingUntil, ...Array<number>(lane.inFlight).fill(now + window)];
    while (free.length < lane.rateClass.requests) free.push(now);
    free.sort((a, b) => a - b);
    let at = now;
    for (let position = 0; position <= lane.queue.length; position += 1) {
      at = Math.max(now, lane.pausedUntil, free.shift()!);
      const until = at + window;
      let index = free.length;
      while (index > 0 && free[index - 1]! > until) index -= 1;
      free.splice(index, 0, until);
    }
    return at;
  }

  function release(lane: Lane) {
    lane.cancelTimer = undefined;
    const now = clock.now();
    while (lane.queue.length > 0 && busy(lane, now) < lane.rateClass.requests) {
      const waiter = lane.queue.shift()!;
      waiter.forget();
      const series = seriesOf(lane.rateClass);
      series?.paced.inc();
      series?.waited.observe((now - waiter.queuedAt) / 1000);
      waiter.go(start(lane));
    }
    arm(lane);
  }

  /** Wakes the lane when its next slot cools down; a slot in flight wakes it when it ends. */
  function arm(lane: Lane) {
    if (lane.queue.length === 0) return;
    const now = clock.now();
    if (busy(lane, now) < lane.rateClass.requests) {
      lane.cancelTimer?.();
      release(lane);
      return;
    }
    if (lane.cancelTimer) return;
    const wake = now < lane.pausedUntil ? lane.pausedUntil : lane.coolingUntil[0];
    if (wake === undefined) return;
    lane.cancelTimer = clock.after(wake - now, () => release(lane));
  }

  /** Forgets lanes that hold nothing a later call needs: none waiting, none in flight or cooling down. */
  function sweep(now: number) {
    for (const [key, lane] of lanes) {
      if (lane.queue.length === 0 && busy(lane, now) === 0) lanes.delete(key);
    }
    sweepAt = Math.max(1024, lanes.size * 2);
  }

  function laneOf(rateClass: RateClass, caller: string, now: number): Lane {
    const key = `${rateClass.name}\u0000${caller}`;
    let lane = lanes.get(key);
    if (!lane) {
      if (lanes.size >= sweepAt) sweep(now);
      lane = { rateClass, inFlight: 0, coolingUntil: [], pausedUntil: 0, queue: [], cancelTimer: undefined };
      lanes.set(key, lane);
    }
    return lane;
  }

  const refuse = (lane: Lane, reason: 'deadline' | 'queue', waitMs: number) => pacingRefusal(service, lane.rateClass, reason, waitMs, seriesOf(lane.rateClass));

  return (call, deadlineAt) => {
    const now = clock.now();
    const lane = laneOf(rateClassOf(rates, call.path), callerKeyOf(callerOf(rates, call.headers), call.scope), now);
    if (lane.queue.length === 0 && busy(lane, now) < lane.rateClass.requests) return start(lane);
    const at = tailSlot(lane, now);
    if (lane.queue.length >= settings.maxQueue) throw refuse(lane, 'queue', at - now);
    // A turn at the deadline itself would leave the call no time at all.
    if (at >= deadlineAt) throw refuse(lane, 'deadline', at - now);
    const scope = call.scope;
    if (scope?.aborted) throw cancelledCall(service);
    return waitInQueue(lane.queue, { clock, deadlineAt, scope, service, refusal: () => refuse(lane, 'deadline', windowOf(lane.rateClass)), moved: () => arm(lane) });
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
