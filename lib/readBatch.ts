import { createBoundedCache } from './boundedCache.ts';

/**
 * Reads batched between the gateway and a subgraph (docs/PERFORMANCE.md, "Reads batched to a
 * subgraph"): the contract both sides read, written once here.
 *
 * The gateway posts a JSON array of GraphQL requests that carry one credential, with this header
 * listing each one's upstream call budget (`-` for none). The subgraph runs each as a request of its
 * own and answers `200` with `READ_BATCH_TYPE`: one frame per operation, written as soon as that
 * operation is answered, in whatever order they finish, so a quick read never waits for a slow one.
 *
 * A frame is a line `<index> <status> <length> <headers as JSON>\n`, then `length` bytes of the
 * operation's answer, as it would have answered the operation alone.
 */
export const READ_BATCH_HEADER = 'x-graph-read-batch';
export const READ_BATCH_TYPE = 'application/x-graph-read-batch';
/** Operations one batch may hold; the subgraph refuses more. */
export const MAX_READ_BATCH = 64;
/** A frame's first line is short (three numbers and a few headers): a longer one is a broken stream. */
const MAX_FRAME_LINE_BYTES = 8 * 1024;
const NEWLINE = 0x0a;

/** One operation's answer inside a batch. */
export interface BatchFrame {
  index: number;
  status: number;
  /** Lower-case names; shared with other frames, so read-only. */
  headers: Readonly<Record<string, string>>;
  body: Buffer;
}

/** The budgets header: one entry per operation. */
export function budgetsHeader(budgets: readonly (number | undefined)[]): string {
  return budgets.map((budget) => (budget === undefined ? '-' : String(budget))).join(',');
}

/** The budgets a batch's header gives, or undefined when it does not give exactly `count` of them. */
export function budgetsOf(header: string | string[] | undefined, count: number, cap: number): number[] | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const parts = value?.split(',');
  if (!parts || parts.length !== count) return undefined;
  const budgets: number[] = [];
  for (const part of parts) {
    const text = part.trim();
    if (text === '-') budgets.push(cap);
    else if (/^[0-9]{1,15}$/.test(text)) budgets.push(Math.min(cap, Number(text)));
    else return undefined;
  }
  return budgets;
}

/** The bytes of one frame. */
export function encodeFrame(index: number, status: number, headers: Record<string, string>, body: Buffer): Buffer[] {
  return [Buffer.from(`${index} ${status} ${body.length} ${JSON.stringify(headers)}\n`), body];
}

/** The frame stream is not what the contract says: the batch is over, its unanswered reads failed. */
export class BrokenBatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrokenBatch';
  }
}

const FRAME_LINE = /^(\d{1,5}) (\d{3}) (\d{1,15}) (\{.*\})$/;

/**
 * Frames of one subgraph carry the same few header lines over and over: each is parsed once. The
 * parsed headers are frozen, shared by every frame that carried that line.
 */
const knownHeaders = createBoundedCache<Readonly<Record<string, string>>>(64);

function headersOf(json: string): Readonly<Record<string, string>> {
  let known = knownHeaders.get(json);
  if (!known) {
    known = Object.freeze(parseHeaders(json));
    knownHeaders.set(json, known);
  }
  return known;
}

function parseHeaders(json: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new BrokenBatch("a frame's headers are not JSON");
  }
  const headers: Record<string, string> = {};
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BrokenBatch('a frame\'s headers are not an object');
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') headers[name.toLowerCase()] = value;
  return headers;
}

/**
 * Reads frames out of the chunks of a batch's answer as they arrive. Bounded: a frame line past
 * 8 KiB, a body past `maxBodyBytes`, an index out of the batch or told twice throws `BrokenBatch`.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private current: { index: number; status: number; length: number; headers: Readonly<Record<string, string>> } | undefined;
  private readonly told = new Set<number>();

  constructor(
    private readonly count: number,
    private readonly maxBodyBytes: number,
  ) {}

  /** Frames completed by this chunk, in the order they came. */
  push(chunk: Buffer): BatchFrame[] {
    this.pending.push(chunk);
    this.pendingLength += chunk.length;
    const frames: BatchFrame[] = [];
    for (;;) {
      if (!this.current) {
        const buffered = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingLength);
        const end = buffered.indexOf(NEWLINE);
        if (end === -1) {
          if (buffered.length > MAX_FRAME_LINE_BYTES) throw new BrokenBatch('a frame line is too long');
          this.pending = [buffered];
          return frames;
        }
        if (end > MAX_FRAME_LINE_BYTES) throw new BrokenBatch('a frame line is too long');
        const match = FRAME_LINE.exec(buffered.subarray(0, end).toString('utf8'));
        if (!match) throw new BrokenBatch('a frame line is not `<index> <status> <length> <headers>`');
        const index = Number(match[1]);
        const length = Number(match[3]);
        if (index >= this.count || this.told.has(index)) throw new BrokenBatch(`frame ${index} is not one this batch is waiting for`);
        if (length > this.maxBodyBytes) throw new BrokenBatch(`frame ${index} is longer than ${this.maxBodyBytes} bytes`);
        this.told.add(index);
        this.current = { index, status: Number(match[2]), length, headers: headersOf(match[4]!) };
        const rest = buffered.subarray(end + 1);
        this.pending = rest.length ? [rest] : [];
        this.pendingLength = rest.length;
      }
      const { current } = this;
      if (this.pendingLength < current.length) return frames;
      const buffered = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingLength);
      frames.push({ index: current.index, status: current.status, headers: current.headers, body: buffered.subarray(0, current.length) });
      const rest = buffered.subarray(current.length);
      this.pending = rest.length ? [rest] : [];
      this.pendingLength = rest.length;
      this.current = undefined;
      if (this.pendingLength === 0) return frames;
    }
  }

  /** Whether every operation of the batch has its frame. */
  get complete(): boolean {
    return this.told.size === this.count;
  }
}
