import { Agent, Pool, type Dispatcher } from 'undici';
import type { Fetcher, FetcherRequestInit, FetcherResponse } from '@apollo/utils.fetcher';
import { originAndPath, type Departure } from '../lib/http.ts';
import { eitherWatch, exchangeBufferedBytes, watchCancellation } from '../lib/bufferedExchange.ts';
import { createDeadlines } from '../lib/deadlines.ts';

export interface UndiciFetcherOptions {
  /** Sockets per subgraph origin. @default 128 */
  connections?: number;
  /** Deadline for one subgraph call, its whole answer included. @default 30000 */
  timeoutMs?: number;
  /** The longest subgraph answer read; a longer one is cut off there. @default 64 MiB */
  maxAnswerBytes?: number;
}

/** What cuts a subgraph request off: an AbortSignal, or a departure (`lib/http.ts`). */
export type Cancellation = AbortSignal | Departure;

/** A subgraph's answer, read whole: subgraphs answer small JSON bodies. */
export interface SubgraphAnswer {
  status: number;
  /** Lower-case names, as undici gives them; read-only (a batch's frames share theirs). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as it came: passed on untouched where the gateway need not read it. */
  bytes: Buffer;
}

export interface UndiciFetcher extends Fetcher {
  /**
   * The data sources' path: a POST of a body already serialised, with no WHATWG Request, Headers
   * or URL built per call. Rejects only when the subgraph could not be reached or did not answer.
   */
  post(url: string, headers: Record<string, string>, body: string, signal?: Cancellation): Promise<SubgraphAnswer>;
  /**
   * A POST whose answer `handler` reads as it arrives (batched reads), under the same deadline as
   * `post`: when it passes, `handler.cancel` is told. The handler calls `settled` once it is done.
   */
  dispatch(url: string, headers: Record<string, string>, body: string, handler: StreamedAnswerHandler): void;
  close(): Promise<void>;
}

/** Reads an answer as it arrives; told to give up when the deadline passes. */
export interface StreamedAnswerHandler extends Dispatcher.DispatchHandler {
  cancel(reason: Error): void;
  /** Set by `dispatch`: the handler calls it once it has settled, so the deadline stops watching. */
  settled?: () => void;
  /** Fails the answer before anything was sent (a request undici refuses outright). */
  fail(error: unknown): void;
}

function responseOf(url: string, status: number, headers: Headers, text: string): FetcherResponse {
  let used = false;
  const consume = () => {
    used = true;
    return text;
  };
  const response: FetcherResponse = {
    get bodyUsed() {
      return used;
    },
    url,
    redirected: false,
    status,
    ok: status >= 200 && status < 300,
    statusText: '',
    headers,
    text: async () => consume(),
    json: async () => JSON.parse(consume()),
    arrayBuffer: async () => {
      const bytes = Buffer.from(consume());
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
    clone: () => responseOf(url, status, headers, text),
  };
  return response;
}

/**
 * Apollo Gateway's fetcher over undici: keep-alive sockets pooled per subgraph origin, instead of
 * the default node-fetch agent. As a `Fetcher` it serves Apollo's interface (readiness checks);
 * `post` is the lean path every subgraph call takes.
 */
export function createUndiciFetcher({ connections = 128, timeoutMs = 30_000, maxAnswerBytes = 64 * 1024 * 1024 }: UndiciFetcherOptions = {}): UndiciFetcher {
  const socketOptions = { connections, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
  const agent = new Agent(socketOptions);
  // The data sources' URLs are few and fixed: each is parsed once and has its own pool, so a call
  // goes straight to its sockets, not through the agent's lookup by origin.
  const targets = new Map<string, { pool: Pool; path: string }>();
  const targetOf = (url: string) => {
    let target = targets.get(url);
    if (!target) {
      const { origin, path } = originAndPath(url);
      target = { pool: new Pool(origin, socketOptions), path };
      targets.set(url, target);
    }
    return target;
  };

  // Calls starting within a few ms of each other share one timer.
  const deadlines = createDeadlines();

  const post = async (url: string, headers: Record<string, string>, body: string, signal?: Cancellation): Promise<SubgraphAnswer> => {
    const { pool, path } = targetOf(url);
    // Read whole from the dispatcher, with no response stream. A departure aborts the request, which
    // closes its connection: the subgraph sees its caller go and cancels its upstream work. The
    // deadline covers the whole answer: undici's own timeouts are idle ones, which a subgraph that
    // trickles its answer never trips.
    const deadline = deadlines(timeoutMs);
    try {
      const answer = await exchangeBufferedBytes(pool, { path, method: 'POST', headers, body }, eitherWatch(deadline.watch, watchCancellation(signal)), maxAnswerBytes);
      return { status: answer.status, headers: answer.headers, bytes: answer.body };
    } finally {
      deadline.release();
    }
  };

  const dispatch = (url: string, headers: Record<string, string>, body: string, handler: StreamedAnswerHandler): void => {
    const { pool, path } = targetOf(url);
    const deadline = deadlines(timeoutMs);
    const unwatch = deadline.watch((reason) => handler.cancel(reason));
    handler.settled = () => {
      unwatch();
      deadline.release();
    };
    try {
      pool.dispatch({ path, method: 'POST', headers, body }, handler);
    } catch (error) {
      handler.fail(error);
    }
  };

  // Read as the data sources' calls are: whole, never past the cap, cancelled by the caller's signal.
  const fetcher = async (url: string, init: FetcherRequestInit = {}): Promise<FetcherResponse> => {
    const answer = await exchangeBufferedBytes(
      agent,
      { ...originAndPath(url), method: (init.method ?? 'GET') as 'GET' | 'POST', headers: init.headers, body: init.body },
      watchCancellation(init.signal as AbortSignal | undefined),
      maxAnswerBytes,
    );
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return responseOf(url, answer.status, headers, answer.body.toString('utf8'));
  };
  return Object.assign(fetcher, { post, dispatch, close: async () => void (await Promise.all([agent.close(), ...[...targets.values()].map(({ pool }) => pool.close())])) });
}
