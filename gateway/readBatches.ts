import type { Dispatcher } from 'undici';
import { onCancel } from '../lib/http.ts';
import { CALL_BUDGET_HEADER } from '../lib/callBudget.ts';
import { BrokenBatch, budgetsHeader, FrameReader, MAX_READ_BATCH, READ_BATCH_HEADER, READ_BATCH_TYPE, type BatchFrame } from '../lib/readBatch.ts';
import type { Cancellation, StreamedAnswerHandler, SubgraphAnswer, UndiciFetcher } from './fetcher.ts';

// Shared, not a fresh arrow per read: the TypeScript loader defines a `name` on each named closure.
const NOTHING = () => {};

/** One read waiting for its batch, then for its frame. */
class Member {
  settled = false;
  /** Told when its caller goes away; a batch sent counts the callers still waiting on it. */
  onLeft: () => void = NOTHING;
  /** Told once it is settled, after it was sent. */
  onSettled: (() => void) | undefined;
  private unlisten: () => void = NOTHING;
  cancellation: Cancellation | undefined;

  constructor(
    readonly body: string,
    readonly budget: number | undefined,
    private readonly resolve: (answer: SubgraphAnswer) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Its caller going away ends its wait at once, and tells `onLeft`. */
  listen(cancellation: Cancellation | undefined): void {
    this.cancellation = cancellation;
    if (!cancellation) return;
    this.unlisten = onCancel(cancellation, () => {
      if (this.settled) return;
      this.fail(cancellation.reason);
      this.onLeft();
    });
  }

  /** Whether this call settles it: the first answer or failure wins. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.unlisten();
    this.onSettled?.();
    return true;
  }

  answer(answer: SubgraphAnswer): void {
    if (this.settle()) this.resolve(answer);
  }

  fail(error: unknown): void {
    if (this.settle()) this.reject(error);
  }

  /** Hands the read over to a request of its own: it settles with that one. */
  forward(answer: Promise<SubgraphAnswer>): void {
    answer.then(
      (whole) => this.answer(whole),
      (error: unknown) => this.fail(error),
    );
  }
}

const CONTENT_TYPE = 'content-type';
/** What a server that does not know batches answers one with: Apollo Server's 400, or no such route or method. */
const DOES_NOT_TAKE_BATCHES = new Set([400, 404, 405, 415, 501]);

/**
 * The answer to one batch, read frame by frame: each read is answered as its frame completes.
 * A subgraph that answers anything but frames (an older one, a refusal) hands its reads back to be
 * sent one by one; nothing of them ran.
 */
class BatchAnswerHandler implements StreamedAnswerHandler {
  settled?: () => void;
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled: Error | undefined;
  private reader: FrameReader;
  private refused = false;
  private done = false;

  constructor(
    private readonly members: readonly Member[],
    maxAnswerBytes: number,
    /** The subgraph answered the batch with something else than frames: its HTTP status. */
    private readonly onRefused: (status: number, members: readonly Member[]) => void,
  ) {
    this.reader = new FrameReader(members.length, maxAnswerBytes);
  }

  cancel(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else {
      this.cancelled = reason;
      this.fail(reason);
    }
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.done = true;
    for (const member of this.members) member.fail(error);
    this.settled?.();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cancelled) controller.abort(this.cancelled);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    if (statusCode === 200 && String(headers[CONTENT_TYPE] ?? '').startsWith(READ_BATCH_TYPE)) return;
    // Not read: the reads go again, one by one.
    this.refused = true;
    this.done = true;
    this.settled?.();
    controller.abort(new BrokenBatch(`the subgraph answered a batch with HTTP ${statusCode}`));
    this.onRefused(statusCode, this.members);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    let frames: BatchFrame[];
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      controller.abort(error as Error);
      return this.fail(error);
    }
    for (const frame of frames) this.members[frame.index]!.answer({ status: frame.status, headers: frame.headers, bytes: frame.body });
  }

  onResponseEnd(): void {
    if (this.done) return;
    if (!this.reader.complete) return this.fail(new BrokenBatch('the subgraph ended a batch before answering every read in it'));
    this.done = true;
    this.settled?.();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.refused) return;
    this.fail(error);
  }
}

export interface ReadBatcherOptions {
  url: string;
  fetcher: UndiciFetcher;
  /** The longest answer of one read. */
  maxAnswerBytes: number;
  /** Reads one batch holds at most. @default MAX_READ_BATCH */
  maxBatch?: number;
  /** A batch's body at most, well under a subgraph's 1 MiB: a read that would pass it starts the next batch. @default 512 KiB */
  maxBatchBytes?: number;
  /** How long a batch gathers; 0 is until the event loop turns, no timer. @default 0 */
  windowMs?: number;
  /** Told once when the subgraph says it does not take batches: it gets each read alone from then on. */
  onRefused?: (status: number) => void;
}

export interface ReadBatcher {
  /**
   * Sends a read with the reads of the same credential that arrive in the same turn of the event
   * loop, as one request; its answer is its own frame. `headers` are the read's, without its budget.
   */
  post(headers: Record<string, string>, body: string, budget: number | undefined, cancellation: Cancellation | undefined): Promise<SubgraphAnswer>;
  /** Whether the subgraph still takes batches. */
  readonly batching: boolean;
  /** Requests sent that carried more than one read, and the reads they carried. */
  readonly batches: number;
  readonly batchedReads: number;
}

/**
 * Reads of one credential to one subgraph, gathered while the event loop reads requests and sent
 * as one request once it turns (`setImmediate`): no read waits for a timer, and a batch is only
 * ever the reads that were ready together. An operator may trade a few milliseconds of every read
 * for larger batches (`windowMs`). Each read keeps its own budget, cancellation, breaker
 * outcome and answer; only the HTTP exchange is shared.
 */
export function createReadBatcher({ url, fetcher, maxAnswerBytes, maxBatch = MAX_READ_BATCH, maxBatchBytes = 512 * 1024, windowMs = 0, onRefused }: ReadBatcherOptions): ReadBatcher {
  let gathering = new Map<string, { headers: Record<string, string>; members: Member[]; bytes: number }>();
  let scheduled = false;
  let batching = true;
  let batches = 0;
  let batchedReads = 0;
  /** Reads sent and not yet answered: with none, nothing is coming to join a new read, which goes at once. */
  let outstanding = 0;
  const answered = () => {
    outstanding -= 1;
  };
  const track = (member: Member) => {
    if (member.onSettled) return;
    outstanding += 1;
    member.onSettled = answered;
  };

  const postAlone = (headers: Record<string, string>, body: string, budget: number | undefined, cancellation: Cancellation | undefined) =>
    fetcher.post(url, budget === undefined ? headers : { ...headers, [CALL_BUDGET_HEADER]: String(budget) }, body, cancellation);

  const sendAlone = (headers: Record<string, string>, member: Member) => {
    if (member.settled) return;
    track(member);
    member.forward(postAlone(headers, member.body, member.budget, member.cancellation));
  };

  const refused = (headers: Record<string, string>) => (status: number, members: readonly Member[]) => {
    // A subgraph that is draining (503) or finds this batch too large (413) still takes batches.
    if (batching && DOES_NOT_TAKE_BATCHES.has(status)) {
      batching = false;
      onRefused?.(status);
    }
    for (const member of members) sendAlone(headers, member);
  };

  const send = (headers: Record<string, string>, members: Member[]) => {
    const live = members.filter((member) => !member.settled);
    if (live.length === 0) return;
    if (live.length === 1 || !batching) {
      for (const member of live) sendAlone(headers, member);
      return;
    }
    batches += 1;
    batchedReads += live.length;
    const handler = new BatchAnswerHandler(live, maxAnswerBytes, refused(headers));
    let waiting = live.length;
    const left = () => {
      waiting -= 1;
      if (waiting === 0) handler.cancel(new DOMException('every caller of the batch went away', 'AbortError'));
    };
    for (const member of live) {
      member.onLeft = left;
      track(member);
    }
    const body = `[${live.map((member) => member.body).join(',')}]`;
    fetcher.dispatch(url, { ...headers, [READ_BATCH_HEADER]: budgetsHeader(live.map((member) => member.budget)) }, body, handler);
  };

  const flush = () => {
    scheduled = false;
    const batches = gathering;
    gathering = new Map();
    for (const { headers, members } of batches.values()) send(headers, members);
  };

  return {
    post(headers, body, budget, cancellation) {
      // Alone at concurrency 1, say: a read waits for others only while reads are in flight, or for a
      // window asked for, and never once the subgraph has turned batches down. Sent as it was before
      // batching, with nothing of a batch's bookkeeping.
      if (!batching || (outstanding === 0 && windowMs === 0 && gathering.size === 0)) {
        outstanding += 1;
        const answer = postAlone(headers, body, budget, cancellation);
        answer.then(answered, answered);
        return answer;
      }
      return new Promise<SubgraphAnswer>((resolve, reject) => {
        const member = new Member(body, budget, resolve, reject);
        member.listen(cancellation);
        if (member.settled) return;
        const key = JSON.stringify(headers);
        let batch = gathering.get(key);
        const bytes = Buffer.byteLength(body);
        if (batch && batch.bytes + bytes > maxBatchBytes) {
          gathering.delete(key);
          send(batch.headers, batch.members);
          batch = undefined;
        }
        if (!batch) {
          batch = { headers, members: [], bytes: 2 };
          gathering.set(key, batch);
        }
        batch.members.push(member);
        batch.bytes += bytes + 1;
        if (batch.members.length >= maxBatch) {
          gathering.delete(key);
          send(batch.headers, batch.members);
          return;
        }
        if (!scheduled) {
          scheduled = true;
          if (windowMs > 0) setTimeout(flush, windowMs);
          else setImmediate(flush);
        }
      });
    },
    get batching() {
      return batching;
    },
    get batches() {
      return batches;
    },
    get batchedReads() {
      return batchedReads;
    },
  };
}
