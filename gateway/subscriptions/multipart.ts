import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError, getOperationAST, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { createOperationPreparer } from './prepare.ts';
import { readStreamedRequest, sendRefusal, writable, type StreamedTransportOptions } from './streamedRequests.ts';

/** What the answer to a subscription is sent as (Apollo's multipart subscription protocol, version 1.0). */
export const MULTIPART_SUBSCRIPTION_TYPE = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"';

/**
 * Whether an `Accept` header asks for it: a `multipart/mixed` range with a `subscriptionSpec`
 * parameter and a q above 0, as Apollo Client's HttpLink sends for subscriptions
 * (`multipart/mixed;subscriptionSpec=1.0, application/json`), ranked anywhere: a query asked this
 * way is handed to plain HTTP once its body is read. Read on every request to `/graphql`, before
 * any limit: one pass over the header, whatever it holds (a regular expression doing the same cost
 * 25 ms of CPU for a 16 KB header of repeated `multipart/mixed`).
 */
export function asksForMultipartSubscription(accept: string): boolean {
  const lower = accept.toLowerCase();
  if (!lower.includes('subscriptionspec')) return false;
  return lower.split(',').some((range) => range.trimStart().startsWith('multipart/mixed') && range.includes('subscriptionspec') && acceptable(range));
}

/** Whether a range's weight lets it be sent: q=0 (or a q that is not a number, as negotiator reads it) refuses it. */
function acceptable(range: string): boolean {
  for (const parameter of range.split(';').slice(1)) {
    const [name, value = ''] = parameter.split('=', 2);
    if (name!.trim() === 'q') return Number.parseFloat(value.trim()) > 0;
  }
  return true;
}

// Each part opens with its headers and closes with the boundary, so the stream always ends on a
// boundary: the first part carries the opening one, the end adds `--` to the last.
const FIRST_PART = Buffer.from('\r\n--graphql\r\ncontent-type: application/json\r\n\r\n');
const PART = Buffer.from('\r\ncontent-type: application/json\r\n\r\n');
const BOUNDARY = Buffer.from('\r\n--graphql');
const END = Buffer.from('--\r\n');
const HEARTBEAT = Buffer.concat([PART, Buffer.from('{}'), BOUNDARY]);
const PAYLOAD_HEAD = Buffer.from('{"payload":');
const PAYLOAD_TAIL = Buffer.from('}');

/** Each shared payload's whole part, built for its first subscriber and written as it is to the rest. */
const partsOfPayload = new WeakMap<Buffer, Buffer>();
function eventPart(payload: Buffer): Buffer {
  let part = partsOfPayload.get(payload);
  if (!part) partsOfPayload.set(payload, (part = Buffer.concat([PART, PAYLOAD_HEAD, payload, PAYLOAD_TAIL, BOUNDARY])));
  return part;
}

/** A transport error: the protocol's `payload: null` with top-level errors, after which the stream ends. */
const fatalPart = (errors: readonly GraphQLFormattedError[]) => Buffer.concat([PART, Buffer.from(JSON.stringify({ payload: null, errors })), BOUNDARY]);

export interface MultipartTransportOptions extends StreamedTransportOptions {
  /** Between two heartbeats (`{}` parts) on a stream with no event. @default 5000, as Apollo Router */
  heartbeatMs?: number;
  /** Where a query or mutation asked this way goes, its body read: answered as over plain HTTP. */
  otherwise: (req: IncomingMessage, res: ServerResponse, url: URL, body: Record<string, unknown> | null) => Promise<void>;
}

/**
 * Subscriptions over plain HTTP, as Apollo Client, Apollo Kotlin and Apollo iOS speak it to Apollo
 * Router: a POST (or GET) asking `Accept: multipart/mixed;subscriptionSpec=1.0` gets one
 * `multipart/mixed` answer whose parts are the events (`{"payload": result}`), a `{}` heartbeat at
 * once and every 5 s, and a final boundary when the subscription ends. An error that ends the
 * subscription (a subscriber too slow, the gateway restarting) is the protocol's transport error,
 * `{"payload": null, "errors": [...]}`, then the end. No WebSocket needed, credentials in the same
 * headers as queries. A query or mutation asked this way is answered as over plain HTTP.
 */
export function createMultipartTransport({ schema, runner, rules = [], maxBodyBytes, format, trustedDocuments, authenticatedOf = () => undefined, payloads, heartbeatMs = 5000, otherwise }: MultipartTransportOptions) {
  const prepare = createOperationPreparer({ schema, rules });
  const formatError = (error: unknown): GraphQLFormattedError => {
    const coded = error instanceof GraphQLError ? error : new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error instanceof Error ? error : undefined });
    return format(coded.toJSON(), coded);
  };
  // The executor's results carry errors formatted already: only a raw GraphQLError needs formatting.
  const formatted = (result: ExecutionResult): object =>
    result.errors?.some((error) => error instanceof GraphQLError) ? { ...result, errors: result.errors.map((error) => (error instanceof GraphQLError ? formatError(error) : error)) } : result;
  const payloadOf = (result: ExecutionResult) => {
    const value = formatted(result);
    return payloads ? payloads.bytesOf(value) : Buffer.from(JSON.stringify(value));
  };
  /** Open streams, each ended with a transport error when the gateway drains. */
  const open = new Set<(errors: readonly GraphQLFormattedError[]) => void>();

  async function stream(res: ServerResponse, events: AsyncIterableIterator<ExecutionResult>): Promise<void> {
    let over = false;
    const finish = (errors?: readonly GraphQLFormattedError[]) => {
      if (over) return;
      over = true;
      clearInterval(heartbeat);
      open.delete(finish);
      res.off('close', left);
      void events.return?.();
      if (res.destroyed || res.writableEnded) return;
      if (errors) res.write(fatalPart(errors));
      res.end(END);
    };
    const left = () => finish();
    res.writeHead(200, { 'content-type': MULTIPART_SUBSCRIPTION_TYPE, 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    // At once, as Apollo Router does: the client sees the stream open before any event.
    res.write(Buffer.concat([FIRST_PART, Buffer.from('{}'), BOUNDARY]));
    // A reader that is behind has bytes waiting already: no heartbeat is queued behind them.
    // (Through the response, not straight to the socket as graphql-ws frames are: the response
    // corks its socket until the next tick, so a subscriber's parts of several events leave in one
    // write; measured straight, 58k and 68k deliveries/s to 1,000 subscribers against 72k and 109k.)
    const heartbeat = setInterval(() => void (!res.writableNeedDrain && res.write(HEARTBEAT)), heartbeatMs);
    heartbeat.unref();
    res.once('close', left);
    open.add(finish);
    try {
      while (!over) {
        const step = await events.next();
        if (step.done || over) break;
        if (!res.write(eventPart(payloadOf(step.value)))) await writable(res);
      }
      finish();
    } catch (error) {
      finish([formatError(error)]);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const read = await readStreamedRequest(req, res, { maxBodyBytes, trustedDocuments, transport: 'GraphQL over multipart HTTP' });
    if (!read) return;
    const prepared = prepare(read.params);
    // Refused as Apollo Server refuses it over plain HTTP, whatever the operation.
    // In application/graphql-response+json when the client prefers it: Apollo Client 4 reads the errors' codes only then.
    if ('errors' in prepared) return sendRefusal(req, res, 400, prepared.errors.map(formatError));
    if (getOperationAST(prepared.document, prepared.operationName)?.operation !== 'subscription') return otherwise(req, res, read.url, read.body);
    const result = await runner.subscribe({ ...prepared, headers: req.headers, remoteAddress: req.socket.remoteAddress, authenticated: authenticatedOf(req), transport: 'multipart' });
    if (res.destroyed) {
      if (Symbol.asyncIterator in result) void result.return?.();
      return;
    }
    if (Symbol.asyncIterator in result) return stream(res, result);
    // Refused before it started (credentials, caps, access): the stream's one part, then its end.
    res.writeHead(200, { 'content-type': MULTIPART_SUBSCRIPTION_TYPE, 'cache-control': 'no-store' });
    res.end(Buffer.concat([FIRST_PART, PAYLOAD_HEAD, Buffer.from(JSON.stringify(formatted(result))), PAYLOAD_TAIL, BOUNDARY, END]));
  }

  return {
    /** Whether a request on `/graphql` asks for this transport. */
    accepts(req: IncomingMessage): boolean {
      const accept = req.headers.accept;
      return accept !== undefined && asksForMultipartSubscription(accept);
    },
    handle,
    /** Ends every open stream with a transport error saying why: the client subscribes again (to another replica). */
    drain(errors: readonly GraphQLFormattedError[]): void {
      for (const finish of [...open]) finish(errors);
    },
  };
}
