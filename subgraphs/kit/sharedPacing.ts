import { createHash, randomUUID } from 'node:crypto';
import { createRequestRedis } from '../../lib/requestRedis.ts';
import type { Logger } from '../../lib/logger.ts';
import { callerOf, rateClassOf, type RateClass } from '../../lib/upstreamRates.ts';
import { cancelledCall } from './callScope.ts';
import { createUpstreamPacer, pacingMetrics, pacingRefusal, waitInQueue, type Pace, type PacedCall, type UpstreamPacerOptions, type Waiter } from './pacing.ts';

/**
 * Takes a slot when one is free: KEYS[1] the lane's slots (member → when it is free again, ms),
 * KEYS[2] when a 429 paused the lane until; ARGV requests, lease (ms), member, window (ms).
 * Answers 0 when taken, else the ms to wait before asking again. Redis's clock is every replica's.
 */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[4])
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused > now then return paused - now end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) + window then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + window) end
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local at = tonumber(first[2])
if at > now + window then at = now + window end
return math.max(1, at - now)
`;

/**
 * Gives a slot back to cool down for a window from now; after a 429, pauses the lane a window.
 * KEYS as for TAKE; ARGV member, window (ms), 1 when the service answered 429.
 */
const RELEASE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', now + window, ARGV[1])
if redis.call('PTTL', KEYS[1]) < window then redis.call('PEXPIRE', KEYS[1], window) end
if ARGV[3] == '1' and tonumber(redis.call('GET', KEYS[2]) or '0') < now + window then
  redis.call('SET', KEYS[2], now + window, 'PX', window)
end
return 0
`;

/** How often a waiting call asks again at most: a slot freed early is not announced. */
const POLL_MS = 50;
/** How long the process paces alone after Redis failed to answer, before it asks Redis again. */
const ALONE_MS = 5_000;

interface Lane {
  key: string;
  rateClass: RateClass;
  slots: string;
  paused: string;
  queue: Waiter[];
  /** The head of the queue is being served, or a timer will serve it. */
  pumping: boolean;
}

export interface SharedPacerOptions extends UpstreamPacerOptions {
  redisUrl: string;
  logger: Logger;
}

/**
 * The pacer of `subgraphs/kit/pacing.ts` with its slots in Redis, for replicas sharing a
 * credential: every replica draws from the same N slots of a class, so together they never send
 * more than the service publishes, however many there are (`UPSTREAM_PACING_SHARE_PERCENT` is then
 * not needed). A slot is held from the moment a call is sent (leased until its deadline and a
 * window, should its replica die) until a window after its answer. Calls wait in a queue per
 * replica, first in first out, asking Redis again when the next slot should be free (at most every
 * 50 ms). A Redis that does not answer leaves the call to this process's own pacer: the graph
 * keeps working, paced to its share.
 *
 * Lanes are keyed by a SHA-256 of the caller's credential, as the gateway's rate limits are: the
 * same in every replica, never the credential itself.
 */
export function createSharedUpstreamPacer(options: SharedPacerOptions): { pace: Pace; close(): Promise<void> } {
  const { service, rates, settings, clock, registry, redisUrl, logger } = options;
  const redis = createRequestRedis(redisUrl);
  const seriesOf = pacingMetrics(service, registry);
  const local = createUpstreamPacer({ ...options, series: seriesOf });
  const lanes = new Map<string, Lane>();
  let warnedAt = -Infinity;
  // A Redis that failed (refused, or hung past the command timeout) is not asked again for a while:
  // each call would otherwise wait out the timeout before pacing alone.
  let aloneUntil = -Infinity;

  const windowOf = (rateClass: RateClass) => rateClass.perMs;

  async function take(lane: Lane, member: string, leaseMs: number): Promise<number> {
    const waitMs = Number(await redis.eval(TAKE, 2, lane.slots, lane.paused, lane.rateClass.requests, leaseMs, member, windowOf(lane.rateClass)));
    // Anything but a wait in ms is a Redis this pacer cannot trust.
    if (!Number.isFinite(waitMs) || waitMs < 0) throw new Error('Redis answered something that is not a wait');
    return waitMs;
  }

  function finished(lane: Lane, member: string): PacedCall {
    let over = false;
    return (status) => {
      if (over) return;
      over = true;
      redis.eval(RELEASE, 2, lane.slots, lane.paused, member, windowOf(lane.rateClass), status === 429 ? '1' : '0').catch(() => undefined);
      // The slot frees a window from now: the lane's next caller asks again then.
      if (lane.queue.length > 0) pump(lane);
    };
  }

  function unavailable(error: unknown) {
    aloneUntil = clock.now() + ALONE_MS;
    if (clock.now() - warnedAt > 60_000) {
      warnedAt = clock.now();
      logger.warn({ service, reason: error instanceof Error ? error.message : String(error) }, 'shared upstream pacing unavailable; pacing in this process only');
    }
  }

  /** Serves the queue's head: takes a slot for it, or asks again when one should be free. */
  function pump(lane: Lane) {
    if (lane.pumping) return;
    const head = lane.queue[0];
    // A lane with no one waiting holds nothing here (its slots are in Redis): forgotten.
    if (!head) return void (lanes.get(lane.key) === lane && lanes.delete(lane.key));
    lane.pumping = true;
    const member = randomUUID();
    const leaseMs = Math.max(0, head.deadlineAt - clock.now()) + windowOf(lane.rateClass);
    take(lane, member, leaseMs).then(
      (waitMs) => {
        lane.pumping = false;
        if (lane.queue[0] !== head) {
          // It left while Redis answered: a slot it took was never used, and is free at once.
          if (waitMs === 0) redis.zrem(lane.slots, member).catch(() => undefined);
          pump(lane);
          return;
        }
        if (waitMs === 0) {
          lane.queue.shift();
          head.forget();
          const series = seriesOf(lane.rateClass);
          series?.paced.inc();
          series?.waited.observe((clock.now() - head.queuedAt) / 1000);
          head.go(finished(lane, member));
          pump(lane);
          return;
        }
        lane.pumping = true;
        clock.after(Math.min(waitMs, POLL_MS), () => {
          lane.pumping = false;
          pump(lane);
        });
      },
      (error: unknown) => {
        lane.pumping = false;
        unavailable(error);
        // Everyone queued here goes to this process's pacer instead.
        for (const waiter of lane.queue.splice(0)) waiter.divert();
      },
    );
  }

  function laneOf(rateClass: RateClass, caller: string): Lane {
    const digest = createHash('sha256').update(caller).digest('base64url');
    const key = `${rateClass.name}\u0000${digest}`;
    let lane = lanes.get(key);
    if (!lane) {
      const prefix = `graph:pace:${service}:${rateClass.name}:${digest}`;
      lane = { key, rateClass, slots: `${prefix}:slots`, paused: `${prefix}:paused`, queue: [], pumping: false };
      lanes.set(key, lane);
    }
    return lane;
  }

  const pace: Pace = async (call, deadlineAt) => {
    const rateClass = rateClassOf(rates, call.path);
    const lane = laneOf(rateClass, callerOf(rates, call.headers) ?? '');
    const window = windowOf(rateClass);
    if (clock.now() < aloneUntil) return local(call, deadlineAt);
    if (lane.queue.length === 0) {
      const member = randomUUID();
      let waitMs: number;
      try {
        waitMs = await take(lane, member, Math.max(0, deadlineAt - clock.now()) + window);
      } catch (error) {
        unavailable(error);
        return local(call, deadlineAt);
      }
      if (waitMs === 0) {
        pump(lane);
        return finished(lane, member);
      }
      // Its turn, estimated from the next slot to free and the calls queued before it.
      const at = clock.now() + waitMs + Math.floor((lane.queue.length * window) / rateClass.requests);
      if (at >= deadlineAt) {
        pump(lane);
        throw pacingRefusal(service, rateClass, 'deadline', at - clock.now(), seriesOf(rateClass));
      }
    } else {
      if (lane.queue.length >= settings.maxQueue) throw pacingRefusal(service, rateClass, 'queue', window, seriesOf(rateClass));
      const at = clock.now() + Math.floor(((lane.queue.length + 1) * window) / rateClass.requests);
      if (at >= deadlineAt) throw pacingRefusal(service, rateClass, 'deadline', at - clock.now(), seriesOf(rateClass));
    }
    const scope = call.scope;
    if (scope?.aborted) throw cancelledCall(service);
    return waitInQueue(lane.queue, { clock, deadlineAt, scope, service, refusal: () => pacingRefusal(service, rateClass, 'deadline', window, seriesOf(rateClass)), moved: () => pump(lane), fallback: () => local(call, deadlineAt) });
  };

  return { pace, close: async () => void redis.disconnect() };
}
