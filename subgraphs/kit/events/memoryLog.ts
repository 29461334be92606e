import { randomBytes } from 'node:crypto';
import { DEFAULT_EVENT_LOG_MAX_BYTES, type AppendResult, type EventLog, type LoggedEvent, type NewEvent } from './eventLog.ts';

export interface MemoryLogOptions {
  /** Events held for replay; the oldest go first. @default 10000 */
  capacity?: number;
  /**
   * Bytes held for replay, measured as the JSON of each event's payload, and separately of the
   * entities remembered for lookups; the oldest go first, but the newest event always stays.
   * @default 64 MiB
   */
  maxBytes?: number;
  /** Dedupe keys remembered. @default 10 × capacity */
  dedupeCapacity?: number;
}

/** An epoch (four random bytes) and a sequence: what `append` writes, in any process. */
const POSITION = /^[0-9a-f]{8}:[1-9][0-9]{0,15}$/;

/** The JSON length of a value: what it costs to hold, give or take the heap's overhead. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '');

/**
 * The default log: a bounded ring in this process. Positions carry an epoch drawn at start, so a
 * position from a previous process reads as unknown and replays everything this one holds: after
 * a restart a subscriber misses nothing this process received, and sees nothing twice.
 */
export function createMemoryLog({ capacity = 10_000, maxBytes = DEFAULT_EVENT_LOG_MAX_BYTES, dedupeCapacity = capacity * 10 }: MemoryLogOptions = {}): EventLog {
  const epoch = randomBytes(4).toString('hex');
  // `ring[i]` holds sequence `firstSequence + i`; slots before `oldest` were let go (undefined) and
  // are spliced off in batches: one splice per many appends instead of a shift per append.
  const ring: (LoggedEvent | undefined)[] = [];
  const sizes: number[] = [];
  let firstSequence = 1;
  let oldest = 0;
  let heldBytes = 0;
  const seen = new Map<string, true>();
  const entities = new Map<string, { value: unknown; size: number }>();
  let entityBytes = 0;
  const listeners = new Set<(event: LoggedEvent) => void>();
  let sequence = 0;

  const sequenceOf = (position: string): number | undefined => {
    const [positionEpoch, number] = position.split(':');
    return positionEpoch === epoch && number !== undefined ? Number(number) : undefined;
  };
  const rememberSeen = (key: string) => {
    seen.delete(key);
    seen.set(key, true);
    if (seen.size > dedupeCapacity) seen.delete(seen.keys().next().value as string);
  };
  const rememberEntity = (key: string, value: unknown) => {
    const size = jsonBytes(value);
    const previous = entities.get(key);
    if (previous) {
      entityBytes -= previous.size;
      entities.delete(key);
    }
    entities.set(key, { value, size });
    entityBytes += size;
    while (entities.size > 1 && (entities.size > capacity || entityBytes > maxBytes)) {
      const [first, entry] = entities.entries().next().value as [string, { size: number }];
      entities.delete(first);
      entityBytes -= entry.size;
    }
  };
  const trim = () => {
    while (ring.length - oldest > 1 && (ring.length - oldest > capacity || heldBytes > maxBytes)) {
      heldBytes -= sizes[oldest]!;
      ring[oldest] = undefined;
      oldest += 1;
    }
    if (oldest >= 1024 && oldest * 2 >= ring.length) {
      ring.splice(0, oldest);
      sizes.splice(0, oldest);
      firstSequence += oldest;
      oldest = 0;
    }
  };

  return {
    async append(event: NewEvent): Promise<AppendResult> {
      if (seen.has(event.dedupeKey)) return { appended: false };
      rememberSeen(event.dedupeKey);
      sequence += 1;
      const logged: LoggedEvent = { dedupeKey: event.dedupeKey, type: event.type, occurredAt: event.occurredAt, payload: event.payload, position: `${epoch}:${sequence}`, ...(event.trace ? { trace: event.trace } : {}) };
      const size = jsonBytes(event.payload) + event.dedupeKey.length + event.type.length + event.occurredAt.length + (event.trace?.length ?? 0);
      ring.push(logged);
      sizes.push(size);
      heldBytes += size;
      trim();
      for (const entity of event.entities ?? []) rememberEntity(`${entity.kind}:${entity.id}`, entity.value);
      for (const listener of listeners) listener(logged);
      return { appended: true, position: logged.position };
    },
    async readAfter(position, limit) {
      // Sequences in the ring are contiguous: the position is an index.
      const after = position === undefined ? undefined : sequenceOf(position);
      const start = Math.max(oldest, after === undefined ? 0 : after - firstSequence + 1);
      return ring.slice(start, start + limit) as LoggedEvent[];
    },
    async head() {
      return ring.at(-1)?.position;
    },
    onAppend(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listeners: () => listeners.size,
    recognises(position) {
      return POSITION.test(position);
    },
    isAfter(a, b) {
      const left = sequenceOf(a);
      const right = sequenceOf(b);
      // A position of another epoch precedes everything this process appended.
      if (left === undefined) return false;
      if (right === undefined) return true;
      return left > right;
    },
    async findEntity(kind, id) {
      return entities.get(`${kind}:${id}`)?.value;
    },
    async close() {
      listeners.clear();
    },
  };
}
