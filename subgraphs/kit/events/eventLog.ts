/**
 * The event log: where ingested upstream events wait for subscribers. One interface, two
 * implementations: a bounded in-memory ring (one process) and Redis Streams (shared by replicas).
 * A position in the log is opaque outside this folder; subscribers resume from it.
 */

/** The default byte bound of a log: what it holds for replay, whatever the event count. */
export const DEFAULT_EVENT_LOG_MAX_BYTES = 64 * 1024 * 1024;

export interface NewEvent {
  /** The upstream's id for the event, else a content hash: a second delivery is dropped. */
  dedupeKey: string;
  type: string;
  /** When the upstream says it happened (ISO 8601). */
  occurredAt: string;
  /** The normalised payload (JSON-serialisable). */
  payload: unknown;
  /** Entities carried by the event, remembered for entity lookups by id (`kind` to id). */
  entities?: { kind: string; id: string; value: unknown }[];
  /**
   * The W3C `traceparent` of the delivery that brought the event in, when traces are on: the
   * gateway links each execution of the event to it (`subgraphs/kit/events/eventTraces.ts`).
   */
  trace?: string;
}

export interface LoggedEvent extends Omit<NewEvent, 'entities'> {
  /** The event's position in the log. */
  position: string;
}

export interface AppendResult {
  /** False when the dedupe key was seen before: nothing was appended. */
  appended: boolean;
  position?: string;
}

export interface EventLog {
  append(event: NewEvent): Promise<AppendResult>;
  /** Events strictly after `position` (from the oldest held when undefined or unknown), oldest first. */
  readAfter(position: string | undefined, limit: number): Promise<LoggedEvent[]>;
  /** The newest position, or undefined when the log is empty. */
  head(): Promise<string | undefined>;
  /** Calls `listener` for every event appended from now on, by any replica sharing the log. */
  onAppend(listener: (event: LoggedEvent) => void): () => void;
  /** Live listeners in this process (one per open subscription). */
  listeners(): number;
  /** True when `a` comes after `b` in this log. */
  isAfter(a: string, b: string): boolean;
  /** Whether `position` has the form of this log's positions, written by this process or another. */
  recognises(position: string): boolean;
  /** An entity remembered from an event, for federation lookups by key. */
  findEntity(kind: string, id: string): Promise<unknown | undefined>;
  close(): Promise<void>;
}
