import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { createHandler, type Request } from 'graphql-sse';
import { ClientDeparture } from '../../lib/http.ts';
import type { Headers } from './operations.ts';
import type { Authenticated } from '../auth/authenticate.ts';
import { createOperationPreparer } from './prepare.ts';
import { prefersEventStream, readStreamedRequest, sendRefusal, writable, type StreamedTransportOptions } from './streamedRequests.ts';
import { PAYLOAD_PLACEHOLDER, PAYLOAD_PLACEHOLDER_JSON } from './sharedPayloads.ts';

/** The options every streaming HTTP transport takes; without `payloads`, graphql-sse serialises each event per subscriber. */
export type SseTransportOptions = StreamedTransportOptions;

interface Raw {
  req: IncomingMessage;
  res: ServerResponse;
  /** Payloads serialised once per group, in the order graphql-sse emits their placeholder events. */
  shared: Buffer[];
}

/** The event graphql-sse writes for the placeholder: distinct connections mode has no operation id, so the frame is the same for every subscriber. */
const PLACEHOLDER_EVENT = `event: next\ndata: ${PAYLOAD_PLACEHOLDER_JSON}\n\n`;
const NEXT_HEAD = Buffer.from('event: next\ndata: ');
const NEXT_TAIL = Buffer.from('\n\n');
/** Each shared payload's whole `next` event, built for its first subscriber and written as it is to the rest. */
const eventsOfPayload = new WeakMap<Buffer, Buffer>();

/** The `next` event around a payload serialised once: the same bytes for every subscriber of a group (distinct connections mode has no operation id). */
export function sharedNextEvent(payload: Buffer): Buffer {
  let event = eventsOfPayload.get(payload);
  if (!event) eventsOfPayload.set(payload, (event = Buffer.concat([NEXT_HEAD, payload, NEXT_TAIL])));
  return event;
}

const SINGLE_CONNECTION_OFF =
  'GraphQL over SSE is served in distinct connections mode only (the graphql-sse client default): reservations (PUT) and stream tokens are not accepted. To run several operations over one connection, use graphql-ws.';

/**
 * A stream whose events end in an error (a subscriber ended for falling too far behind) with that
 * error as its last result: graphql-sse would cut the connection instead, and the client would not
 * learn why nor how to resume. `return` goes straight to the stream, so leaving never waits for
 * an event.
 */
function withFinalError(events: AsyncIterableIterator<ExecutionResult>): AsyncIterableIterator<ExecutionResult> {
  const wrapped: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      try {
        return await events.next();
      } catch (error) {
        const coded = error instanceof GraphQLError ? error : new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error instanceof Error ? error : undefined });
        return { value: { errors: [coded] }, done: false };
      }
    },
    return: async () => (await events.return?.()) ?? { value: undefined, done: true },
    // graphql-sse ends only a stream that has `throw` too (it checks for an async generator).
    throw: async (error: unknown) => {
      await events.return?.();
      throw error;
    },
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}

/**
 * graphql-sse on the gateway's `/graphql`, distinct connections mode only: a POST (or GET) with
 * `Accept: text/event-stream` carries one operation, credentials in the same headers as for queries.
 *
 * The body is read here, within `MAX_BODY_BYTES`, and handed to graphql-sse parsed (its own reader
 * would buffer any size). Single connection mode is off: its reservations live in one process's
 * memory with no expiry, and graphql-sse queues events for a stream nobody opened without bound;
 * graphql-ws already multiplexes operations on one connection. Results are written as the socket
 * drains, so a slow reader's events wait in the executor's bounded queue, not in ours.
 */
export function createSseTransport({ schema, runner, rules = [], maxBodyBytes, format, trustedDocuments, authenticatedOf = () => undefined, payloads }: SseTransportOptions) {
  const prepare = createOperationPreparer({ schema, rules });
  const formatErrors = (errors: readonly (GraphQLError | GraphQLFormattedError)[]) => errors.map((error) => (error instanceof GraphQLError ? format(error.toJSON(), error) : error));

  const handler = createHandler<Raw, undefined, { query: string; headers: Headers; remoteAddress: string | undefined; authenticated?: Authenticated | undefined; signal: AbortSignal }>({
    schema,
    // No token: graphql-sse's single connection mode is disabled, every request stands alone.
    authenticate: () => null as unknown as string,
    onSubscribe(req, params) {
      const prepared = prepare(params);
      // As graphql-sse's protocol has it, a request's GraphQL errors (syntax, validation, variables)
      // are the stream's one result, so a client sees them rather than a bare 400; `data` is absent
      // on the wire, as for any request error (graphql-sse needs the key to take it as a result).
      if ('errors' in prepared) return { data: undefined, errors: prepared.errors };
      const { query, ...operation } = prepared;
      // Aborted if the client goes before its answer: a query's upstream work still queued is not made.
      return { schema, ...operation, contextValue: { query, headers: req.raw.req.headers, remoteAddress: req.raw.req.socket.remoteAddress, authenticated: authenticatedOf(req.raw.req), signal: new ClientDeparture(req.raw.res).signal } };
    },
    // `onSubscribe` has validated already.
    validate: () => [],
    subscribe: async (args) => {
      const result = await runner.subscribe({ ...args, headers: args.contextValue.headers, remoteAddress: args.contextValue.remoteAddress, authenticated: args.contextValue.authenticated, transport: 'sse' });
      return Symbol.asyncIterator in result ? withFinalError(result) : result;
    },
    execute: (args) => runner.execute({ ...args, query: args.contextValue.query, headers: args.contextValue.headers, authenticated: args.contextValue.authenticated, signal: args.contextValue.signal, transport: 'sse' }),
    async onNext(_ctx, req, result) {
      await writable(req.raw.res);
      // The executor's results carry errors formatted already: only a raw GraphQLError needs a copy.
      const formatted = result.errors?.some((error) => error instanceof GraphQLError) ? { ...result, errors: formatErrors(result.errors) as unknown as GraphQLError[] } : undefined;
      if (!payloads) return formatted;
      req.raw.shared.push(payloads.bytesOf(formatted ?? result));
      return PAYLOAD_PLACEHOLDER as unknown as typeof result;
    },
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const requested = new URL(req.url ?? '/', 'http://local');
    if (method !== 'GET' && method !== 'POST') {
      return sendRefusal(req, res, 405, [{ message: SINGLE_CONNECTION_OFF, extensions: { code: 'BAD_REQUEST' } }], { allow: 'GET, POST' });
    }
    if (req.headers['x-graphql-event-stream-token'] !== undefined || requested.searchParams.has('token')) {
      req.resume();
      return sendRefusal(req, res, 400, [{ message: SINGLE_CONNECTION_OFF, extensions: { code: 'BAD_REQUEST' } }]);
    }
    const read = await readStreamedRequest(req, res, { maxBodyBytes, trustedDocuments, transport: 'GraphQL over SSE' });
    if (!read) return;
    const { body, url } = read;
    const request: Request<Raw, undefined> = {
      method,
      url: `${url.pathname}${url.search}`,
      headers: {
        // This transport was chosen for the event stream: graphql-sse needs the exact type to stream.
        get: (name) => (name === 'accept' ? 'text/event-stream' : ([] as string[]).concat(req.headers[name] ?? []).join('\n') || undefined),
      },
      body,
      raw: { req, res, shared: [] },
      context: undefined,
    };
    const [stream, init] = await handler(request);
    if (stream && typeof stream !== 'string') {
      const ended = () => void stream.return?.(undefined);
      res.once('close', ended);
      res.writeHead(init.status, init.statusText, init.headers);
      for await (const chunk of stream) {
        if (res.destroyed || !res.writable) break;
        const shared = chunk === PLACEHOLDER_EVENT ? request.raw.shared.shift() : undefined;
        if (!res.write(shared ? sharedNextEvent(shared) : chunk)) await writable(res);
      }
      res.off('close', ended);
      res.end();
      return;
    }
    res.writeHead(init.status, init.statusText, init.headers);
    res.end(stream ?? undefined);
  }

  return {
    /**
     * Whether a request on `/graphql` is for this transport rather than plain HTTP: an event stream
     * the client ranks above JSON, or an attempt at single connection mode (PUT, DELETE, a stream
     * token), refused here in words. Chosen before the body is read, so on the `Accept` alone: a
     * subscription from a client that prefers JSON goes to plain HTTP, which refuses it with 406
     * naming the transports (graphql-sse and urql rank the event stream first for subscriptions).
     */
    accepts(req: IncomingMessage): boolean {
      return prefersEventStream(req.headers.accept) || req.method === 'PUT' || req.method === 'DELETE' || req.headers['x-graphql-event-stream-token'] !== undefined;
    },
    handle,
  };
}
