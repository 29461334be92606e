import { request, type IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { WireError } from './transports.ts';

/** A subscriber whose reading can be stopped: its socket is left unread, as a stalled client's is. */
export interface Stalling {
  /** Results received so far (`next` payloads); an error that ends the stream is kept as a result of errors. */
  results: { data?: unknown; errors?: WireError[] }[];
  stall(): void;
  resume(): void;
  close(): void;
}

/** `query` over graphql-ws, credentials in `connectionParams`. */
export function stallingWs(graphqlUrl: string, query: string, headers: Record<string, string>): Stalling {
  const socket = new WebSocket(graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const results: Stalling['results'] = [];
  socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: headers })));
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
    if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    if (message.type === 'next') results.push(message.payload as Stalling['results'][number]);
    if (message.type === 'error') results.push({ errors: message.payload as WireError[] });
  });
  return { results, stall: () => socket.pause(), resume: () => socket.resume(), close: () => socket.close() };
}

/** A streamed POST of `query` with this `Accept`, each message its `parse` finds in what arrived. */
function stallingStream(graphqlUrl: string, query: string, headers: Record<string, string>, accept: string, parse: (buffered: string, results: Stalling['results']) => string): Stalling {
  const results: Stalling['results'] = [];
  let response: IncomingMessage | undefined;
  let buffered = '';
  const call = request(graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept, ...headers } }, (res) => {
    response = res;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (buffered = parse(buffered + chunk, results)));
  });
  call.end(JSON.stringify({ query }));
  return { results, stall: () => response?.pause(), resume: () => response?.resume(), close: () => call.destroy() };
}

/** `query` over GraphQL over SSE (distinct connections). */
export function stallingSse(graphqlUrl: string, query: string, headers: Record<string, string>): Stalling {
  return stallingStream(graphqlUrl, query, headers, 'text/event-stream', (buffered, results) => {
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const message = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = /^event: (\w+)/m.exec(message)?.[1];
      const data = /^data: (.*)$/m.exec(message)?.[1];
      if (event === 'next' && data) results.push(JSON.parse(data) as Stalling['results'][number]);
    }
    return buffered;
  });
}

/** `query` over multipart HTTP, as Apollo clients subscribe to a router. */
export function stallingMultipart(graphqlUrl: string, query: string, headers: Record<string, string>): Stalling {
  return stallingStream(graphqlUrl, query, headers, 'multipart/mixed;subscriptionSpec="1.0", application/json', (buffered, results) => {
    let end;
    while ((end = buffered.indexOf('\r\n--graphql', 1)) >= 0) {
      const part = buffered.slice(0, end);
      buffered = buffered.slice(end);
      const message = JSON.parse(part.slice(part.indexOf('\r\n\r\n') + 4)) as { payload?: Stalling['results'][number] | null; errors?: WireError[] };
      // The protocol's transport error (`payload: null`) ends it.
      if (message.payload) results.push(message.payload);
      else if (message.errors) results.push({ errors: message.errors });
    }
    return buffered;
  });
}
