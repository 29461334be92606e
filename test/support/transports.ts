import { request } from 'node:http';
import WebSocket from 'ws';

/** One error as a client sees it. */
export interface WireError {
  message: string;
  extensions?: { code?: string } & Record<string, unknown>;
}

/** What one operation came to on a transport: the HTTP status (or close code) and the first result or refusal. */
export interface WireOutcome {
  status: number;
  /** The body parsed: a result, or the errors of a refusal. */
  body?: { data?: unknown; errors?: WireError[] };
  /** The raw text, for assertions on what must not appear. */
  text: string;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** POSTs an operation over plain HTTP. `body` as a string is sent as it is. */
export async function overHttp(url: string, body: unknown, headers: Record<string, string> = {}): Promise<WireOutcome> {
  return jsonOutcome(await fetch(url, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }));
}

/** A JSON answer (a refusal, or a result that is not a stream) as an outcome. */
async function jsonOutcome(response: Response): Promise<WireOutcome> {
  const text = await response.text();
  let parsed: WireOutcome['body'];
  try {
    parsed = text ? (JSON.parse(text) as WireOutcome['body']) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}

/**
 * POSTs an operation with this `Accept` and reads the stream until `first` finds a result in what
 * has arrived; an answer of another type is read as JSON.
 */
async function firstStreamed(url: string, body: unknown, headers: Record<string, string>, accept: string, first: (buffered: string) => WireOutcome['body'] | undefined): Promise<WireOutcome> {
  const controller = new AbortController();
  const response = await fetch(url, { method: 'POST', headers: { ...JSON_TYPE, accept, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body), signal: controller.signal });
  if (!String(response.headers.get('content-type')).startsWith(accept.split(';', 1)[0]!)) return jsonOutcome(response);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const found = first(buffered);
      if (found) return { status: response.status, body: found, text: JSON.stringify(found) };
    }
  } finally {
    controller.abort();
  }
  return { status: response.status, text: buffered };
}

/**
 * POSTs an operation over GraphQL over SSE (distinct connections) and reads its first `next` event,
 * or the JSON refusal when the answer is not a stream.
 */
export function overSse(url: string, body: unknown, headers: Record<string, string> = {}): Promise<WireOutcome> {
  return firstStreamed(url, body, headers, 'text/event-stream', (buffered) => {
    const event = /event: next\ndata: (.*)\n\n/.exec(buffered);
    return event ? (JSON.parse(event[1]!) as WireOutcome['body']) : undefined;
  });
}

/**
 * POSTs an operation over Apollo's multipart HTTP protocol and reads its first result (heartbeats
 * skipped; a transport error as its errors), or the JSON answer when the answer is not multipart.
 */
export function overMultipart(url: string, body: unknown, headers: Record<string, string> = {}): Promise<WireOutcome> {
  return firstStreamed(url, body, headers, 'multipart/mixed;subscriptionSpec="1.0", application/json', (buffered) => {
    for (const part of buffered.split('\r\n--graphql').slice(1, -1)) {
      const message = JSON.parse(part.slice(part.indexOf('\r\n\r\n') + 4)) as { payload?: WireOutcome['body'] | null; errors?: WireError[] };
      if (message.payload) return message.payload;
      if (message.errors) return { errors: message.errors };
    }
    return undefined;
  });
}

/** Subscribes once over graphql-ws and resolves with the first `next` or `error` payload (status 0), or the close code. */
export function overWs(url: string, payload: unknown, connectionParams: Record<string, string> = {}): Promise<WireOutcome> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const done = (outcome: WireOutcome) => {
      resolve(outcome);
      socket.close();
    };
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: connectionParams })));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
      if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload }));
      else if (message.type === 'next') done({ status: 0, body: message.payload as WireOutcome['body'], text: JSON.stringify(message.payload) });
      else if (message.type === 'error') done({ status: 0, body: { errors: message.payload as WireError[] }, text: JSON.stringify(message.payload) });
    });
    socket.on('close', (code) => resolve({ status: code, text: '' }));
    socket.on('error', () => undefined);
  });
}

/** The four ways to send one operation, by name, for tests that hold every transport to one rule. */
export const TRANSPORTS = {
  http: (url: string, payload: unknown, headers: Record<string, string>) => overHttp(url, payload, headers),
  sse: (url: string, payload: unknown, headers: Record<string, string>) => overSse(url, payload, headers),
  multipart: (url: string, payload: unknown, headers: Record<string, string>) => overMultipart(url, payload, headers),
  ws: (url: string, payload: unknown, headers: Record<string, string>) => overWs(url, payload, headers),
} as const;

/**
 * Streams a JSON body of `bytes` without holding it, stopping as soon as the server answers or
 * drops the connection; resolves with the status (or the error code) and how much was sent.
 */
export function streamBody(url: string, headers: Record<string, string>, bytes: number): Promise<{ status?: number; reset?: string; sentBytes: number; text?: string }> {
  return new Promise((resolve) => {
    let sent = 0;
    const req = request(url, { method: 'POST', headers: { ...JSON_TYPE, ...headers } });
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode, sentBytes: sent, text: Buffer.concat(chunks).toString('utf8') });
        req.destroy();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ reset: error.code ?? error.message, sentBytes: sent }));
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const pump = () => {
      while (sent < bytes && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end();
    };
    req.write('{"query":"');
    pump();
  });
}

/** Opens a WebSocket on `url`, sends one message of `bytes`, and resolves with the close code. */
export function sendOversizedFrame(url: string, bytes: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    socket.on('open', () => socket.send(Buffer.alloc(bytes, 0x20)));
    socket.on('close', (code) => resolve(code));
    socket.on('error', () => undefined);
  });
}
