import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../subgraphs/kit/events/memoryLog.ts';
import { createRedisLog } from '../../subgraphs/kit/events/redisLog.ts';
import type { EventLog } from '../../subgraphs/kit/events/eventLog.ts';
import { eventTraceOf, resolveEvent } from '../../subgraphs/kit/events/eventTraces.ts';
import { spanContextOf } from '../../lib/tracing.ts';
import { requireBinary } from '../support/binaries.ts';
import { startRedis } from '../support/redisServer.ts';
import { testLogger } from '../support/logs.ts';

/**
 * The trace context of the delivery that brought an event in is kept with the event, in either
 * log, for the gateway to link the event's execution to (docs/TRACING.md); events without one
 * stay as they were.
 */
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const traced = { dedupeKey: 'traced', type: 't', occurredAt: '2026-01-01T00:00:00Z', payload: { n: 1 }, trace: TRACEPARENT };
const untraced = { dedupeKey: 'untraced', type: 't', occurredAt: '2026-01-01T00:00:01Z', payload: { n: 2 } };

async function keepsTraces(log: EventLog) {
  const live: unknown[] = [];
  const detach = log.onAppend((event) => live.push(event));
  await log.append(traced);
  await log.append(untraced);
  const read = await log.readAfter(undefined, 10);
  expect(read.map((event) => event.trace)).toEqual([TRACEPARENT, undefined]);
  expect(read[1]).not.toHaveProperty('trace');
  await expect.poll(() => live.length).toBe(2);
  expect(live).toEqual(read);
  detach();
}

describe('event traces', () => {
  it('are kept by the in-memory log', async () => {
    await keepsTraces(createMemoryLog());
  });

  describe.skipIf(!requireBinary('redis-server'))('with Redis', async () => {
    const redis = await startRedis();
    afterAll(() => redis.close());
    it('are kept by the Redis log', async () => {
      const log = await createRedisLog({ url: redis.url, prefix: 'graph:test', logger: testLogger('event-log-traces') });
      try {
        await keepsTraces(log);
      } finally {
        await log.close();
      }
    });
  });

  it('follow a subscription’s context from one event to the next, an untraced event clearing it', () => {
    const context = {};
    expect(eventTraceOf(context)).toBeUndefined();
    resolveEvent({ ...traced, position: '1' }, {}, context);
    expect(eventTraceOf(context)).toBe(TRACEPARENT);
    expect(eventTraceOf({})).toBeUndefined();
    resolveEvent({ ...untraced, position: '2' }, {}, context);
    expect(eventTraceOf(context)).toBeUndefined();
    expect(eventTraceOf(undefined)).toBeUndefined();
  });

  it('are read at the gateway only when they are valid W3C trace contexts', () => {
    expect(spanContextOf(TRACEPARENT)).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    for (const broken of [undefined, 42, '', 'not a traceparent', '00-00000000000000000000000000000000-b7ad6b7169203331-01', `${TRACEPARENT}${'0'.repeat(100)}`, { traceparent: TRACEPARENT }]) {
      expect(spanContextOf(broken)).toBeUndefined();
    }
  });
});
