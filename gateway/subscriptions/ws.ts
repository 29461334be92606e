import type http from 'node:http';
import { GraphQLError, getOperationAST, type FormattedExecutionResult, type GraphQLFormattedError, type GraphQLSchema, type ValidationRule } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { connectionHeaders, type Headers, type OperationRunner } from './operations.ts';
import { createOperationPreparer } from './prepare.ts';
import { PAYLOAD_PLACEHOLDER, type SharedPayloads } from './sharedPayloads.ts';
import { createNextFrameSink, SharedFrameWebSocket } from './wsFrames.ts';
import { isPushIterator } from './pushIterator.ts';
import type { OperationParams, TrustedDocuments } from '../trustedDocuments.ts';
import { clientAddress, makeTrustedProxies, type TrustedProxies } from '../../lib/trustedProxies.ts';
import { TOO_MANY_STREAMS } from '../connectionCaps.ts';
import type { Logger } from '../../lib/logger.ts';

const NO_PROXIES = makeTrustedProxies([]);
const TOO_MANY_STREAMS_BODY = JSON.stringify(TOO_MANY_STREAMS);

/** A graphql-ws `complete` with an operation id of any sensible length. */
const COMPLETE_MESSAGE_MAX_BYTES = 1024;

export interface WebSocketTransportOptions {
  server: http.Server;
  schema: GraphQLSchema;
  runner: OperationRunner;
  /** The one formatError (codes, masking, suggestions hidden in production). */
  format: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  rules?: readonly ValidationRule[];
  /** Trusted documents and persisted queries, checked as on every transport. */
  trustedDocuments: Pick<TrustedDocuments, 'admitPayload'>;
  /** The largest message accepted; a larger one closes the socket with 1009 before it is buffered. */
  maxPayloadBytes: number;
  /** Operations one connection may hold open at once. */
  maxOperationsPerConnection: number;
  /** @default '/graphql' */
  path?: string;
  /** Where each event's payload is serialised once for all its identical subscribers; without it, graphql-ws serialises per subscriber. */
  payloads?: SharedPayloads | undefined;
  /** Proxies whose `X-Forwarded-For` on the upgrade request names the client, for limits per address. @default none */
  trustedProxies?: TrustedProxies | undefined;
  /** Counts a connection against its client's cap; undefined refuses it (`gateway/connectionCaps.ts`). @default no cap */
  admitStream?: ((req: http.IncomingMessage) => (() => void) | undefined) | undefined;
  /** Where a client's protocol errors are noted (at debug); without it, they are not. */
  logger?: Logger | undefined;
}

/** What ws emits on a server socket for a frame the client got wrong (over the cap, malformed, bad UTF-8): ws has closed it with the right code already. */
const clientProtocolError = (error: Error): string | undefined => {
  const code: unknown = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('WS_ERR_') ? code : undefined;
};

/**
 * graphql-ws (the graphql-transport-ws protocol) on the gateway's `/graphql`, by WebSocket upgrade.
 * Credentials travel in `connectionParams` under the same names as the HTTP headers. Every frame
 * is bounded by `maxPayloadBytes` (ws would accept 100 MiB before any credential is seen), and
 * each operation is checked as Apollo Server checks one over HTTP, with the same codes.
 */
export function attachWebSocketTransport({ server, schema, runner, format, rules = [], trustedDocuments, maxPayloadBytes, maxOperationsPerConnection, path = '/graphql', payloads, trustedProxies = NO_PROXIES, admitStream, logger }: WebSocketTransportOptions): (code?: number, reason?: string) => Promise<void> {
  // Each upgrade admitted holds its place until its socket closes, handshake completed or not.
  const verifyClient = admitStream
    ? ({ req }: { req: http.IncomingMessage }, verified: (result: boolean, code?: number, message?: string, headers?: http.OutgoingHttpHeaders) => void) => {
        const release = admitStream(req);
        if (!release) return verified(false, 429, TOO_MANY_STREAMS_BODY, { 'content-type': 'application/json' });
        req.socket.once('close', release);
        verified(true);
      }
    : undefined;
  const wss = new WebSocketServer({ server, path, maxPayload: maxPayloadBytes, perMessageDeflate: false, WebSocket: SharedFrameWebSocket, ...(verifyClient ? { verifyClient } : {}) });
  const prepare = createOperationPreparer({ schema, rules });
  // One per connection, aborted when it closes: queries and mutations still running stop their
  // upstream work, as an HTTP request's do when its client goes away (subscriptions end anyway).
  const closing = new WeakMap<object, AbortController>();
  const closingOf = (ctx: object) => {
    let controller = closing.get(ctx);
    if (!controller) closing.set(ctx, (controller = new AbortController()));
    return controller;
  };
  // One per query or mutation in flight, by connection and operation id, aborted when the client
  // sends `complete` for it: graphql-ws then only drops the result, and the upstream work would go on.
  const running = new WeakMap<WebSocket, Map<string, AbortController>>();
  // Each connection's connectionParams as headers, read once when it is acknowledged.
  const headersOf = new WeakMap<object, Headers>();
  const disposable = useServer<Record<string, unknown> | undefined, Record<string, unknown>>(
    {
      schema,
      onConnect(ctx) {
        const read = connectionHeaders(ctx.connectionParams);
        if ('refusal' in read) {
          // A malformed message's close code, with the reason; graphql-ws's own close (4403) after it is a no-op.
          ctx.extra.socket.close(4400, read.refusal);
          return false;
        }
        headersOf.set(ctx, read.headers);
        return true;
      },
      onSubscribe(ctx, id, payload) {
        // The operation being subscribed already holds its place in `ctx.subscriptions`.
        if (Object.keys(ctx.subscriptions).length > maxOperationsPerConnection) {
          return [new GraphQLError(`this connection already holds ${maxOperationsPerConnection} operations, the most allowed at once (MAX_SUBSCRIPTIONS_PER_CONNECTION)`, { extensions: { code: 'RATE_LIMITED' } })];
        }
        // graphql-ws wants a string `query`: an operation sent by id carries an empty one.
        const admission = trustedDocuments.admitPayload(payload as OperationParams);
        if ('refusal' in admission) return [new GraphQLError(admission.refusal.error.message, { extensions: admission.refusal.error.extensions })];
        const prepared = prepare(admission.admitted);
        if ('errors' in prepared) return prepared.errors;
        const { query, ...operation } = prepared;
        const request = (ctx.extra as { request?: http.IncomingMessage }).request;
        const contextValue = {
          query,
          // graphql-ws runs no operation before the connection is acknowledged.
          headers: headersOf.get(ctx) ?? {},
          remoteAddress: request?.socket.remoteAddress,
          clientAddress: request ? clientAddress(request, trustedProxies) : undefined,
          signal: closingOf(ctx).signal,
        };
        // A subscription's `complete` is graphql-ws's to handle (it ends the stream), and an idle
        // subscriber holds nothing more. Made only for an operation that will run, so that
        // graphql-ws's `onComplete` always forgets it.
        if (getOperationAST(operation.document, operation.operationName)?.operation !== 'subscription') {
          const completed = new AbortController();
          let operations = running.get(ctx.extra.socket);
          if (!operations) running.set(ctx.extra.socket, (operations = new Map()));
          operations.set(id, completed);
          contextValue.signal = AbortSignal.any([contextValue.signal, completed.signal]);
        }
        return { schema, ...operation, contextValue };
      },
      onComplete: (ctx, id) => void running.get(ctx.extra.socket)?.delete(id),
      onClose: (ctx) => closing.get(ctx)?.abort(new DOMException('the client went away', 'AbortError')),
      subscribe: (args) => runner.subscribe({ ...args, ...(args.contextValue as { query: string; headers: Headers; remoteAddress?: string; clientAddress?: string }), transport: 'ws' }),
      execute: (args) => runner.execute({ ...args, ...(args.contextValue as { query: string; headers: Headers; remoteAddress?: string; clientAddress?: string; signal: AbortSignal }), transport: 'ws' }),
      // A group's events go straight to each subscriber's socket as they come, framed around the
      // payload serialised once; graphql-ws still sends the end (`complete` or `error`).
      onOperation: (ctx, id, _payload, _args, result) => {
        const { socket, request } = ctx.extra;
        if (payloads && isPushIterator<object>(result) && socket.extensions === '') result.deliverTo(createNextFrameSink(socket, request.socket, id, payloads));
        return undefined;
      },
      // Every result of the runner is already formatted: send it as it is, serialised once for all
      // the subscribers it was pushed to (the socket frames it around the operation's id).
      onNext: (ctx, id, _payload, _args, result) => {
        if (!payloads) return result as FormattedExecutionResult;
        (ctx.extra.socket as SharedFrameWebSocket).expect(id, payloads.bytesOf(result));
        return PAYLOAD_PLACEHOLDER as unknown as FormattedExecutionResult;
      },
      // Refusals come coded from `onSubscribe`; an error a stream ends with is masked unless coded.
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => format(error.toJSON(), error)),
    },
    wss,
  );
  wss.on('connection', (socket: WebSocket) => {
    // graphql-ws (registered first) prints any socket error to stderr as "Internal error … check your
    // implementation" with a stack. A client's protocol error is no such thing: ws has already
    // closed the socket with its code (1009 for a frame over the cap, 1002, 1007), so it is noted
    // at debug. Anything else still goes to graphql-ws, which closes the socket with 4500.
    const theirs = socket.listeners('error') as ((error: Error) => void)[];
    socket.removeAllListeners('error');
    socket.on('error', (error: Error) => {
      const code = clientProtocolError(error);
      if (code) return void logger?.debug({ code, reason: error.message }, 'a graphql-ws client broke the protocol; its connection was closed');
      for (const listener of theirs) listener.call(socket, error);
    });
    socket.on('message', (data, isBinary) => {
      // Only a small text can be a `complete`; anything else is graphql-ws's alone to read.
      if (isBinary || !Buffer.isBuffer(data) || data.length > COMPLETE_MESSAGE_MAX_BYTES || !data.includes('"complete"')) return;
      let message: unknown;
      try {
        message = JSON.parse(data.toString('utf8'));
      } catch {
        return;
      }
      const { type, id } = (message ?? {}) as { type?: unknown; id?: unknown };
      if (type === 'complete' && typeof id === 'string') running.get(socket)?.get(id)?.abort(new DOMException('the client completed the operation', 'AbortError'));
    });
  });
  let detached: Promise<void> | undefined;
  // Closing with 1012 (service restart) tells graphql-ws clients to reconnect, to another replica.
  return (code = 1001, reason = 'Going away') =>
    (detached ??= (async () => {
      for (const client of wss.clients) client.close(code, reason);
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    })());
}
