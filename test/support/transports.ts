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
  const response = await fetch(url, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
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
 * POSTs an operation over GraphQL over SSE (distinct connections) and reads its first `next` event,
 * or the JSON refusal when the answer is not a stream.
 */
export async function overSse(url: string, body: unknown, headers: Record<string, string> = {}): Promise<WireOutcome> {
  const controller = new AbortController();
  const response = await fetch(url, { method: 'POST', headers: { ...JSON_TYPE, accept: 'text/event-stream', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body), signal: controller.signal });
  if (!String(response.headers.get('content-type')).startsWith('text/event-stream')) {
    const text = await response.text();
    let parsed: WireOutcome['body'];
    try {
      parsed = text ? (JSON.parse(text) as WireOutcome['body']) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text };
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const event = /event: next\ndata: (.*)\n\n/.exec(buffered);
      if (event) return { status: response.status, body: JSON.parse(event[1]!) as WireOutcome['body'], text: event[1]! };
    }
  } finally {
    controller.abort();
  }
  return { status: response.status, text: buffered };
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

/** The three ways to send one operation, by name, for tests that hold every transport to one rule. */
export const TRANSPORTS = {
  http: (url: string, payload: unknown, headers: Record<string, string>) => overHttp(url, payload, headers),
  sse: (url: string, payload: unknown, headers: Record<string, string>) => overSse(url, payload, headers),
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
