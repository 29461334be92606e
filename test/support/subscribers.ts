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
export function subscribeWs(url: string, query: string, { variables, connectionParams }: { variables?: Record<string, unknown>; connectionParams?: Record<string, string> } = {}): Collected {
  const client = createWsClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams, lazy: true, retryAttempts: 0 });
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
