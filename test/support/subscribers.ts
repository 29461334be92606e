import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import WebSocket from 'ws';
import type { ExecutionResult } from 'graphql';

export interface Collected {
  results: ExecutionResult<Record<string, unknown>>[];
  /** Resolves once `count` results arrived (rejects after `timeoutMs` with what did arrive). */
  waitFor(count: number, timeoutMs?: number): Promise<ExecutionResult<Record<string, unknown>>[]>;
  /** Resolves when the stream ended (completed or failed). */
  ended: Promise<unknown>;
  close(): void;
}

function collector(): { collected: Omit<Collected, 'close'>; push(result: ExecutionResult<Record<string, unknown>>): void; finish(error?: unknown): void } {
  const results: ExecutionResult<Record<string, unknown>>[] = [];
  const waiters = new Set<() => void>();
  let finish!: (error?: unknown) => void;
  const ended = new Promise((resolve) => (finish = resolve));
  return {
    collected: {
      results,
      ended,
      waitFor(count, timeoutMs = 8000) {
        return new Promise((resolve, reject) => {
          const check = () => {
            if (results.length >= count) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(results.slice(0, count));
            }
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            reject(new Error(`expected ${count} results, got ${results.length}: ${JSON.stringify(results)}`));
          }, timeoutMs);
          waiters.add(check);
          check();
        });
      },
    },
    push(result) {
      results.push(result);
      for (const waiter of [...waiters]) waiter();
    },
    finish: (error) => finish(error),
  };
}

/** Subscribes over graphql-ws with credentials in connectionParams. */
export function subscribeWs(url: string, query: string, { variables, connectionParams, upgradeHeaders }: { variables?: Record<string, unknown>; connectionParams?: Record<string, string>; upgradeHeaders?: Record<string, string> } = {}): Collected {
  // Headers on the upgrade request itself, as a proxy in front of the gateway would add them.
  const webSocketImpl = upgradeHeaders
    ? class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers: upgradeHeaders });
        }
      }
    : WebSocket;
  const client = createWsClient({ url: url.replace(/^http/, 'ws'), webSocketImpl, connectionParams, lazy: true, retryAttempts: 0 });
  const { collected, push, finish } = collector();
  const unsubscribe = client.subscribe<Record<string, unknown>>({ query, variables }, { next: push, error: finish, complete: () => finish() });
  return {
    ...collected,
    close() {
      unsubscribe();
      void client.dispose();
    },
  };
}

/** Subscribes over graphql-sse with credentials in the request headers. */
export function subscribeSse(url: string, query: string, { variables, headers, singleConnection = false }: { variables?: Record<string, unknown>; headers?: Record<string, string>; singleConnection?: boolean } = {}): Collected {
  const client = createSseClient({ url, headers, singleConnection, retryAttempts: 0 });
  const { collected, push, finish } = collector();
  const unsubscribe = client.subscribe<Record<string, unknown>>({ query, variables: variables ?? {} }, { next: push, error: finish, complete: () => finish() });
  return {
    ...collected,
    close() {
      unsubscribe();
      client.dispose();
    },
  };
}

export interface Resuming extends Collected {
  /** The close code of every socket the client lost, in order. */
  closeCodes: number[];
  /** Connections made, the first included. */
  connections(): number;
}

/**
 * A client as docs/EVENTS.md asks one to be: over graphql-ws, and whenever its socket drops
 * (a gateway stopped or died), it reconnects, through the load balancer, and subscribes again
 * with `after` set to the cursor of the last event it received. A GraphQL error ends it.
 */
export function subscribeResuming(
  url: string,
  query: string,
  {
    variables = {},
    connectionParams,
    cursorOf,
    beforeReconnect = async () => {},
    maxConnections = 20,
  }: {
    variables?: Record<string, unknown>;
    connectionParams?: Record<string, string>;
    cursorOf(result: ExecutionResult<Record<string, unknown>>): string | undefined;
    /** Runs between a lost socket and the next attempt (a test holds the client away meanwhile). */
    beforeReconnect?: () => Promise<void>;
    maxConnections?: number;
  },
): Resuming {
  const { collected, push, finish } = collector();
  const closeCodes: number[] = [];
  let after: string | undefined;
  let connections = 0;
  let stopped = false;
  let current: { dispose(): void } | undefined;

  function connect(): void {
    if (stopped) return;
    if (++connections > maxConnections) return finish(new Error(`gave up after ${maxConnections} connections`));
    const client = createWsClient({
      url: url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams,
      lazy: true,
      // Reconnection is ours: graphql-ws would subscribe again with the first cursor.
      retryAttempts: 0,
      on: { closed: (event) => closeCodes.push((event as { code: number }).code) },
    });
    const unsubscribe = client.subscribe<Record<string, unknown>>(
      { query, variables: { ...variables, after } },
      {
        next(formatted) {
          const result = formatted as ExecutionResult<Record<string, unknown>>;
          after = cursorOf(result) ?? after;
          push(result);
        },
        error(error) {
          void client.dispose();
          if (Array.isArray(error)) return finish(error);
          // A dropped or refused socket: the balancer sends the next attempt to a replica alive.
          void beforeReconnect().then(() => setTimeout(connect, 20));
        },
        complete: () => finish(),
      },
    );
    current = {
      dispose() {
        unsubscribe();
        void client.dispose();
      },
    };
  }

  connect();
  return {
    ...collected,
    closeCodes,
    connections: () => connections,
    close() {
      stopped = true;
      current?.dispose();
    },
  };
}

/** What a multipart subscriber saw besides its results: the answer's status and type, heartbeats, and a transport error if one ended it. */
export interface MultipartCollected extends Collected {
  response: Promise<Response>;
  heartbeats(): number;
  /** The errors of the protocol's transport error (`payload: null`), once one arrived. */
  fatal(): unknown[] | undefined;
  /** Whether the stream ended on the closing boundary (`--graphql--`). */
  closedCleanly(): boolean;
}

/**
 * Subscribes over Apollo's multipart HTTP protocol with a bare fetch, reading the parts as a
 * client library would: `{}` is a heartbeat, `{"payload": ...}` a result, `{"payload": null,
 * "errors": [...]}` a transport error that ends it.
 */
export function subscribeMultipart(url: string, query: string, { variables, headers = {} }: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {}): MultipartCollected {
  const { collected, push, finish } = collector();
  const abort = new AbortController();
  let heartbeats = 0;
  let fatal: unknown[] | undefined;
  let clean = false;
  const response = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json', ...headers },
    body: JSON.stringify({ query, variables: variables ?? {} }),
    signal: abort.signal,
  });
  void (async () => {
    const answer = await response;
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of answer.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      // A part sits between two boundaries: `\r\n--graphql` + its headers, a blank line, its JSON.
      for (let end = text.indexOf('\r\n--graphql', 1); end !== -1; end = text.indexOf('\r\n--graphql', 1)) {
        const part = text.slice(0, end);
        text = text.slice(end);
        const json = part.slice(part.indexOf('\r\n\r\n') + 4);
        if (part.indexOf('\r\n\r\n') === -1) continue;
        const message = JSON.parse(json) as { payload?: ExecutionResult<Record<string, unknown>> | null; errors?: unknown[] };
        if (!('payload' in message)) heartbeats += 1;
        else if (message.payload === null) fatal = message.errors;
        else push(message.payload!);
      }
      if (text === '\r\n--graphql--\r\n') clean = true;
    }
  })().then(
    () => finish(),
    (error: unknown) => finish(error),
  );
  return {
    ...collected,
    response,
    heartbeats: () => heartbeats,
    fatal: () => fatal,
    closedCleanly: () => clean,
    close: () => abort.abort(),
  };
}
