import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { Registry } from 'prom-client';
import { createUpstreamPacer, readPacingSettings, type PacingSettings } from '../../subgraphs/kit/pacing.ts';
import { createCallScope } from '../../subgraphs/kit/callScope.ts';
import type { RestCall } from '../../subgraphs/kit/transport.ts';
import { PUBLISHED_RATES, rateClassOf, type ServiceRates } from '../../lib/upstreamRates.ts';
import { ConfigError } from '../../lib/config.ts';
import { createManualClock } from '../support/manualClock.ts';

const RATES: ServiceRates = {
  callerHeaders: ['x-key'],
  classes: [
    { name: 'fast', requests: 3, perMs: 1000, segments: ['fast'] },
    { name: 'slow', requests: 1, perMs: 1000 },
  ],
};
const SETTINGS: PacingSettings = { enabled: true, sharePercent: 100, maxQueue: 100 };
const FAR = 1e12;
const SECRET = 'pacing-secret-credential-7f3c9a1e';

function setUp(settings: Partial<PacingSettings> = {}) {
  const clock = createManualClock(0);
  const registry = new Registry();
  const pace = createUpstreamPacer({ service: 'svc', rates: RATES, settings: { ...SETTINGS, ...settings }, clock, registry });
  const started: { id: number; at: number }[] = [];
  const failed: { id: number; error: GraphQLError }[] = [];
  /** The calls held in flight (`hold`), by id: calling one ends that call. */
  const inFlight = new Map<number, (status?: number) => void>();
  /**
   * Paces call `id`; records when it starts, or how it failed (at once or later). The call is over
   * as soon as it starts, unless `hold` keeps it in flight until the test ends it.
   */
  const call = (id: number, { path = '/fast/1', key = SECRET, deadlineAt = FAR, scope, hold = false, status = 200 }: { path?: string; key?: string; deadlineAt?: number; scope?: RestCall['scope']; hold?: boolean; status?: number } = {}) => {
    const restCall: RestCall = { operation: 'op', method: 'GET', path, headers: { 'x-key': key }, ...(scope ? { scope } : {}) };
    const begin = (finished: (status?: number) => void) => {
      started.push({ id, at: clock.now() });
      if (hold) inFlight.set(id, finished);
      else finished(status);
    };
    try {
      const turn = pace(restCall, deadlineAt);
      if (typeof turn === 'function') begin(turn);
      else turn.then(begin, (error: GraphQLError) => failed.push({ id, error }));
    } catch (error) {
      failed.push({ id, error: error as GraphQLError });
    }
  };
  const settle = async () => {
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
  };
  /** Moves the clock timer by timer, letting the calls each timer releases record their start. */
  const advance = async (ms: number) => {
    let left = ms;
    for (let due = clock.nextDueIn(); due !== undefined && due <= left; due = clock.nextDueIn()) {
      clock.advance(due);
      left -= due;
      await settle();
    }
    clock.advance(left);
    await settle();
  };
  return { clock, registry, call, advance, started, failed, inFlight };
}

/** The most starts in any window of `windowMs`. */
function busiestWindow(starts: readonly number[], windowMs: number): number {
  return Math.max(...starts.map((from) => starts.filter((at) => at >= from && at < from + windowMs).length));
}

describe('upstream pacer', () => {
  it('lets a burst of the class size go at once, then holds the rate in every window', async () => {
    const t = setUp();
    for (let id = 0; id < 10; id += 1) t.call(id);
    expect(t.started.map((entry) => entry.at)).toEqual([0, 0, 0]);
    await t.advance(999);
    expect(t.started).toHaveLength(3);
    await t.advance(1);
    expect(t.started).toHaveLength(6);
    await t.advance(2000);
    expect(t.started.map((entry) => entry.at)).toEqual([0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000, 3000]);
    expect(busiestWindow(t.started.map((entry) => entry.at), 1000)).toBe(3);
    expect(t.failed).toEqual([]);
  });

  it('serves waiting calls first in, first out', async () => {
    const t = setUp();
    for (let id = 0; id < 8; id += 1) t.call(id, { path: '/slow' });
    await t.advance(10_000);
    expect(t.started.map((entry) => entry.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(t.started.map((entry) => entry.at)).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]);
  });

  it('paces each credential and each class on its own', async () => {
    const t = setUp();
    for (let id = 0; id < 4; id += 1) t.call(id, { key: 'first-credential' });
    for (let id = 10; id < 14; id += 1) t.call(id, { key: 'second-credential' });
    t.call(20, { path: '/slow', key: 'first-credential' });
    expect(t.started.map((entry) => entry.id).sort((a, b) => a - b)).toEqual([0, 1, 2, 10, 11, 12, 20]);
    await t.advance(1000);
    expect(t.started.map((entry) => entry.id).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 10, 11, 12, 13, 20]);
  });

  it('refuses at once, unsent, a call whose turn would come after its deadline', async () => {
    const t = setUp();
    for (let id = 0; id < 6; id += 1) t.call(id, { deadlineAt: 1500 });
    t.call(6, { deadlineAt: 1500 });
    expect(t.failed).toHaveLength(1);
    const { id, error } = t.failed[0]!;
    expect(id).toBe(6);
    expect(error.extensions).toMatchObject({ code: 'RATE_LIMITED', service: 'svc', retryAfterSeconds: 2 });
    expect(error.message).toMatch(/3 requests per second \(fast\).*deadline/);
    // The ones admitted all start before the deadline.
    await t.advance(1500);
    expect(t.started.map((entry) => entry.at)).toEqual([0, 0, 0, 1000, 1000, 1000]);
  });

  it('holds a slot while its call is in flight, and a window after it ended', async () => {
    const t = setUp();
    for (let id = 0; id < 3; id += 1) t.call(id, { hold: true });
    t.call(3);
    await t.advance(5000);
    expect(t.started.map((entry) => entry.id)).toEqual([0, 1, 2]);
    t.inFlight.get(1)!();
    await t.advance(999);
    expect(t.started.map((entry) => entry.id)).toEqual([0, 1, 2]);
    await t.advance(1);
    expect(t.started.at(-1)).toEqual({ id: 3, at: 6000 });
  });

  it('lets a waiting call go with RATE_LIMITED when its deadline passes before its turn', async () => {
    const t = setUp();
    for (let id = 0; id < 3; id += 1) t.call(id, { hold: true });
    // Estimated as if the calls in flight ended now: a turn at 1000, within the deadline.
    t.call(3, { deadlineAt: 1200 });
    expect(t.failed).toEqual([]);
    await t.advance(1200);
    expect(t.failed.map(({ id, error }) => [id, error.extensions.code])).toEqual([[3, 'RATE_LIMITED']]);
    // It left the queue: the next call waits only for the slots.
    t.call(4);
    for (const finished of t.inFlight.values()) finished();
    await t.advance(1000);
    expect(t.started.at(-1)).toEqual({ id: 4, at: 2200 });
  });

  it('waits a whole window after the service answered 429 all the same', async () => {
    const t = setUp();
    t.call(0, { hold: true });
    t.call(1);
    await t.advance(500);
    t.inFlight.get(0)!(429);
    // Two slots were free, but nothing goes until a window after the refusal.
    t.call(2, { deadlineAt: 1400 });
    t.call(3);
    expect(t.failed.map(({ id, error }) => [id, error.extensions.code])).toEqual([[2, 'RATE_LIMITED']]);
    await t.advance(999);
    expect(t.started.map((entry) => entry.id)).toEqual([0, 1]);
    await t.advance(1);
    expect(t.started.at(-1)).toEqual({ id: 3, at: 1500 });
  });

  it('takes a cancelled call out of the queue and moves the ones behind it up', async () => {
    const t = setUp();
    const controller = new AbortController();
    const scope = createCallScope({ budget: 100, signal: controller.signal });
    t.call(0, { path: '/slow' });
    t.call(1, { path: '/slow', scope });
    t.call(2, { path: '/slow' });
    controller.abort(new Error('client gone'));
    await t.advance(0);
    expect(t.failed.map(({ id, error }) => [id, error.extensions.code])).toEqual([[1, 'UPSTREAM_UNAVAILABLE']]);
    await t.advance(1000);
    expect(t.started).toEqual([
      { id: 0, at: 0 },
      { id: 2, at: 1000 },
    ]);
    // A call from a request already gone is never queued.
    t.call(3, { path: '/slow', scope });
    expect(t.failed.map(({ id }) => id)).toEqual([1, 3]);
  });

  it('bounds the calls one credential may have waiting in a class', async () => {
    const t = setUp({ maxQueue: 2 });
    for (let id = 0; id < 4; id += 1) t.call(id, { path: '/slow' });
    expect(t.started.map((entry) => entry.id)).toEqual([0]);
    expect(t.failed.map(({ id, error }) => [id, error.extensions.code])).toEqual([[3, 'RATE_LIMITED']]);
    expect(t.failed[0]!.error.message).toMatch(/too many calls are already waiting/);
    expect(t.failed[0]!.error.extensions.retryAfterSeconds).toBe(3);
    // Another credential's queue is its own.
    t.call(10, { path: '/slow', key: 'another' });
    expect(t.started.map((entry) => entry.id)).toEqual([0, 10]);
  });

  it('uses only its share of the published rate', async () => {
    const t = setUp({ sharePercent: 50 });
    for (let id = 0; id < 3; id += 1) t.call(id, { path: '/slow' });
    await t.advance(5000);
    expect(t.started.map((entry) => entry.at)).toEqual([0, 2000, 4000]);
  });

  it('counts paced calls, their waits and refusals by service and class, never by credential', async () => {
    const t = setUp({ maxQueue: 1 });
    t.call(0, { path: '/slow' });
    t.call(1, { path: '/slow' });
    t.call(2, { path: '/slow' });
    t.call(3, { path: '/slow', key: 'other-key', deadlineAt: 0 });
    t.call(4, { path: '/slow', key: 'other-key', deadlineAt: 0 });
    await t.advance(1000);
    const text = await t.registry.metrics();
    expect(text).toContain('svc_upstream_paced_total{service="svc",class="slow"} 1');
    expect(text).toContain('svc_upstream_pacing_wait_seconds_sum{service="svc",class="slow"} 1');
    expect(text).toContain('svc_upstream_pacing_refused_total{service="svc",class="slow",reason="queue"} 1');
    expect(text).toContain('svc_upstream_pacing_refused_total{service="svc",class="slow",reason="deadline"} 1');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('other-key');
  });

  it('reads its settings, refusing bad values by name', () => {
    expect(readPacingSettings({})).toEqual({ enabled: true, sharePercent: 100, maxQueue: 100 });
    expect(readPacingSettings({ UPSTREAM_PACING: 'off', UPSTREAM_PACING_SHARE_PERCENT: '45', UPSTREAM_PACING_MAX_QUEUE: '10' })).toEqual({ enabled: false, sharePercent: 45, maxQueue: 10 });
    expect(() => readPacingSettings({ UPSTREAM_PACING_SHARE_PERCENT: '0' })).toThrow(ConfigError);
    expect(() => readPacingSettings({ UPSTREAM_PACING: 'sometimes' })).toThrow(/UPSTREAM_PACING/);
  });
});

describe('published rates', () => {
  it('classes marketplace paths as the service publishes them, the strictest class for anything else', () => {
    const marketplace = PUBLISHED_RATES.marketplace!;
    const classOf = (path: string) => rateClassOf(marketplace, path).name;
    expect(classOf('/products')).toBe('products');
    expect(classOf('/products/SKU-1')).toBe('products');
    expect(classOf('/products?filters[status]=enabled&page=2')).toBe('products');
    expect(classOf('https://api.example.com/products')).toBe('products');
    expect(classOf('/orders/ORD-1')).toBe('orders');
    expect(classOf('/questions')).toBe('other');
    expect(classOf('/variations/SKU-1-BLK')).toBe('other');
    expect(classOf('/shipments/products/')).toBe('other');
    expect(rateClassOf(PUBLISHED_RATES.messaging!, '/subscriber/status/1555').requests).toBe(100);
  });
});
