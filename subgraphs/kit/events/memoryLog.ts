import { randomBytes } from 'node:crypto';
import type { AppendResult, EventLog, LoggedEvent, NewEvent } from './eventLog.ts';

export interface MemoryLogOptions {
  /** Events held for replay; the oldest go first. @default 10000 */
  capacity?: number;
  /** Dedupe keys remembered. @default 10 × capacity */
  dedupeCapacity?: number;
}

/**
 * The default log: a bounded ring in this process. Positions carry an epoch drawn at start, so a
 * position from a previous process reads as unknown and replays everything this one holds: after
 * a restart a subscriber misses nothing this process received, and sees nothing twice.
 */
export function createMemoryLog({ capacity = 10_000, dedupeCapacity = capacity * 10 }: MemoryLogOptions = {}): EventLog {
  const epoch = randomBytes(4).toString('hex');
  const ring: LoggedEvent[] = [];
  const seen = new Map<string, true>();
  const entities = new Map<string, unknown>();
  const listeners = new Set<(event: LoggedEvent) => void>();
  let sequence = 0;

  const sequenceOf = (position: string): number | undefined => {
    const [positionEpoch, number] = position.split(':');
    return positionEpoch === epoch && number !== undefined ? Number(number) : undefined;
  };
  const remember = <V>(map: Map<string, V>, key: string, value: V, max: number) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > max) map.delete(map.keys().next().value as string);
  };

  return {
    async append(event: NewEvent): Promise<AppendResult> {
      if (seen.has(event.dedupeKey)) return { appended: false };
      remember(seen, event.dedupeKey, true, dedupeCapacity);
      sequence += 1;
      const logged: LoggedEvent = { dedupeKey: event.dedupeKey, type: event.type, occurredAt: event.occurredAt, payload: event.payload, position: `${epoch}:${sequence}` };
      ring.push(logged);
      // Trimmed in batches: one splice per `capacity` appends instead of a shift per append.
      if (ring.length >= capacity * 2) ring.splice(0, ring.length - capacity);
      for (const entity of event.entities ?? []) remember(entities, `${entity.kind}:${entity.id}`, entity.value, capacity);
      for (const listener of listeners) listener(logged);
      return { appended: true, position: logged.position };
    },
    async readAfter(position, limit) {
      // Sequences in the ring are contiguous: the position is an index.
      const held = ring.length > capacity ? ring.length - capacity : 0;
      const oldest = ring.length ? sequenceOf(ring[0]!.position)! : sequence + 1;
      const after = position === undefined ? undefined : sequenceOf(position);
      const start = Math.max(held, after === undefined ? 0 : after - oldest + 1);
      return ring.slice(start, start + limit);
    },
    async head() {
      return ring.at(-1)?.position;
    },
    onAppend(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listeners: () => listeners.size,
    isAfter(a, b) {
      const left = sequenceOf(a);
      const right = sequenceOf(b);
      // A position of another epoch precedes everything this process appended.
      if (left === undefined) return false;
      if (right === undefined) return true;
      return left > right;
    },
    async findEntity(kind, id) {
      return entities.get(`${kind}:${id}`);
    },
    async close() {
      listeners.clear();
    },
  };
}
