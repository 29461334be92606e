import { describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../subgraphs/kit/events/memoryLog.ts';
import { followLog } from '../../subgraphs/kit/events/follow.ts';

const event = (n: number) => ({ dedupeKey: `k${n}`, type: 't', occurredAt: '2026-01-01T00:00:00Z', payload: n });

describe('the in-memory event log', () => {
  it('drops redeliveries and keeps the newest `capacity` events', async () => {
    const log = createMemoryLog({ capacity: 3 });
    expect((await log.append(event(1))).appended).toBe(true);
    expect((await log.append(event(1))).appended).toBe(false);
    for (let n = 2; n <= 8; n += 1) await log.append(event(n));
    expect((await log.readAfter(undefined, 10)).map((logged) => logged.payload)).toEqual([6, 7, 8]);
  });

  it('reads after a position, and reads everything after a position of another process', async () => {
    const log = createMemoryLog({ capacity: 100 });
    const positions: string[] = [];
    for (let n = 1; n <= 5; n += 1) positions.push((await log.append(event(n))).position!);
    expect((await log.readAfter(positions[1], 2)).map((logged) => logged.payload)).toEqual([3, 4]);
    expect((await log.readAfter(positions[4], 10))).toEqual([]);
    expect((await log.readAfter('deadbeef:3', 10)).map((logged) => logged.payload)).toEqual([1, 2, 3, 4, 5]);
    expect(log.isAfter(positions[2]!, positions[1]!)).toBe(true);
    expect(log.isAfter('deadbeef:9', positions[0]!)).toBe(false);
  });

  it('follows from a position with no gap and no repeat between replay and live', async () => {
    const log = createMemoryLog();
    const first = await log.append(event(1));
    await log.append(event(2));
    const followed = await followLog(log, first.position);
    await log.append(event(3));
    const seen = [];
    for (let n = 0; n < 2; n += 1) seen.push((await followed.next()).value!.payload);
    await log.append(event(4));
    seen.push((await followed.next()).value!.payload);
    expect(seen).toEqual([2, 3, 4]);
    await followed.return!();
    expect(log.listeners()).toBe(0);
  });
});
