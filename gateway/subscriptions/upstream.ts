import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import type { Logger } from '../../lib/logger.ts';
import { ErrorCode } from '../../lib/errors.ts';

export interface UpstreamRequest {
  query: string;
  operationName?: string;
  variables: Record<string, unknown>;
}

export interface UpstreamOptions {
  /** The subgraph's GraphQL URL; http(s) becomes ws(s). */
  url: string;
  connectionParams: Record<string, string>;
  /** The subscribe payload for a (re)connection; called each time, so it can carry the last cursor. */
  request(): UpstreamRequest;
  onResult(result: ExecutionResult): void;
  /** The upstream ended the stream for good (completed, or refused it): `errors` says why. */
  onEnd(errors?: readonly GraphQLFormattedError[]): void;
  logger: Logger;
  /** @default 100 */
  initialBackoffMs?: number;
  /** @default 5000 */
  maxBackoffMs?: number;
  /**
   * The largest message read from the subgraph; a larger one closes the socket (1009), and the
   * stream resumes. Met again on resuming, before any event came through, it ends the stream.
   * @default 64 MiB
   */
  maxMessageBytes?: number;
  /** The subgraph's name, for the error that ends a stream. */
  service?: string;
}

export interface Upstream {
  close(): void;
}

/**
 * A socket given up for a message past `maxMessageBytes`: `ws` reports it as an error event (its
 * RangeError's code) and closes with 1009; graphql-ws passes on whichever came first.
 */
function isMessageTooBig(error: unknown): boolean {
  const event = error as { code?: unknown; error?: { code?: unknown } } | null;
  return event?.code === 1009 || event?.error?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
}

/** Failures of the subgraph's upstream that a later attempt may not meet. */
const TRANSIENT = new Set(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_ERROR', 'RATE_LIMITED']);

/**
 * One subscription to a subgraph over graphql-ws that survives the connection: when the socket
 * drops it reconnects with backoff and subscribes again with `request()` (which resumes from the
 * last cursor). A stream the subgraph completes or refuses ends for good.
 */
/**
 * A `ws` client reading no message past `maxPayload` (`ws` would read 100 MiB): graphql-ws builds
 * its sockets with a URL and a protocol alone, so the bound is set by the class it is given.
 */
const boundedWebSockets = new Map<number, typeof WebSocket>();
function boundedWebSocket(maxPayload: number): typeof WebSocket {
  let bounded = boundedWebSockets.get(maxPayload);
  if (!bounded) {
    bounded = class BoundedWebSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { maxPayload });
      }
    } as typeof WebSocket;
    boundedWebSockets.set(maxPayload, bounded);
  }
  return bounded;
}

/**
 * Lets a client go. graphql-ws's `dispose` waits for a connection still being made before closing
 * it, and rejects when that connection fails (the subgraph went away meanwhile): unheard, that
 * rejection would end the gateway's process.
 */
function letGo(client: Client | undefined): void {
  if (!client) return;
  void Promise.resolve(client.dispose()).catch(() => undefined);
}

export function openUpstream({ url, connectionParams, request, onResult, onEnd, logger, initialBackoffMs = 100, maxBackoffMs = 5000, maxMessageBytes = 64 * 1024 * 1024, service }: UpstreamOptions): Upstream {
  const wsUrl = url.replace(/^http/, 'ws');
  let closed = false;
  let client: Client | undefined;
  let unsubscribe: (() => void) | undefined;
  let failures = 0;
  let streamed = false;
  // Sockets closed for a message too big since the last event: resuming replays from the same
  // cursor, so a second one means the next event itself is too big, and retrying cannot pass it.
  let tooBig = 0;
  let timer: NodeJS.Timeout | undefined;

  function retry(reason: string) {
    letGo(client);
    client = undefined;
    if (closed) return;
    const wait = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failures) * (0.75 + Math.random() * 0.5);
    failures += 1;
    logger.warn({ reason, retryInMs: Math.round(wait) }, 'subgraph subscription interrupted; resuming');
    timer = setTimeout(connect, wait);
  }

  function connect() {
    if (closed) return;
    const current = createClient({
      url: wsUrl,
      connectionParams,
      webSocketImpl: boundedWebSocket(maxMessageBytes),
      lazy: true,
      // Reconnection is ours: graphql-ws would resubscribe with the original payload, replaying from the start.
      retryAttempts: 0,
      keepAlive: 10_000,
    });
    client = current;
    unsubscribe = current.subscribe<Record<string, unknown>>(request(), {
      next(result) {
        const errorsOnly = !result.data && (result.errors?.length ?? 0) > 0;
        if (errorsOnly && streamed && result.errors!.every((error) => TRANSIENT.has(String(error.extensions?.code)))) {
          // Resuming met a passing failure upstream: try again rather than end everyone's stream.
          unsubscribe?.();
          retry(String(result.errors![0]!.extensions?.code));
          return;
        }
        if (!errorsOnly) {
          streamed = true;
          failures = 0;
          tooBig = 0;
        }
        onResult(result as ExecutionResult);
      },
      error(error) {
        if (closed || client !== current) return;
        if (Array.isArray(error)) {
          letGo(current);
          onEnd(error as GraphQLFormattedError[]);
          return;
        }
        if (isMessageTooBig(error) && ++tooBig >= 2) {
          // Anything this client reports later is not a second ending.
          client = undefined;
          letGo(current);
          logger.error({ service, maxMessageBytes }, 'subgraph subscription event past the bound again on resuming; ending the stream');
          onEnd([
            {
              message: `an event of the ${service ?? 'subgraph'}'s stream is larger than the gateway reads (${maxMessageBytes} bytes): the stream cannot go on past it`,
              extensions: { code: ErrorCode.UpstreamError, ...(service ? { service } : {}) },
            },
          ]);
          return;
        }
        // A socket that closed or never opened: nothing the subgraph decided.
        streamed = streamed || failures === 0;
        retry((error as { code?: number }).code ? `socket closed (${(error as { code: number }).code})` : (error as Error).message ?? 'socket error');
      },
      complete() {
        if (closed || client !== current) return;
        letGo(current);
        onEnd();
      },
    });
  }

  connect();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      unsubscribe?.();
      letGo(client);
    },
  };
}
