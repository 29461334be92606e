import { request } from 'node:http';
import WebSocket from 'ws';

/**
 * Subscribers in a process of their own (see `bench/subscriptions.ts`), so that what the benchmark
 * measures is the gateway's fan-out, not the client's parsing. Each subscriber is its own
 * connection holding one subscription, as a dashboard's browser tab would: graphql-ws, spoken
 * directly over `ws`, or Apollo's multipart HTTP over `node:http`. Each reads only the event's
 * `reason` from what arrives, so a client costs little per delivery.
 *
 * To the parent, over IPC: `ready` once every subscription is sent, `delivered` with each
 * subscriber's arrival time (ms on the machine's monotonic clock, comparable across processes)
 * once all of this process's subscribers have an event, `collected` with what arrived when asked
 * to give up on one, `failure` when a subscriber ends.
 */
/** How the subscribers subscribe. */
export type SubscriberTransport = 'graphql-ws' | 'multipart';

export interface SubscriberProcessSettings {
  transport: SubscriberTransport;
  /** The gateway's `/graphql`, over HTTP. */
  url: string;
  subscribers: number;
  connectionParams: Record<string, string>;
  query: string;
  variables: Record<string, unknown>;
}

export type ToSubscribers = { type: 'collect'; reason: string };
export type FromSubscribers =
  | { type: 'ready' }
  | { type: 'delivered' | 'collected'; reason: string; arrivals: number[] }
  | { type: 'failure'; message: string };

/** Milliseconds on CLOCK_MONOTONIC: one clock for every process of the machine. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

const REASON = /"reason":"(benchmark event \d+)"/;
/** Handshakes in flight at once: enough to connect 10,000 in seconds, few enough not to be refused. */
const CONNECTING_AT_ONCE = 100;

function main(): void {
  const settings = JSON.parse(process.env.BENCH_SUBSCRIBER_SETTINGS!) as SubscriberProcessSettings;
  const send = (message: FromSubscribers) => process.send!(message);
  const arrivals = new Map<string, number[]>();
  const givenUp = new Set<string>();
  const sockets: { terminate(): void }[] = [];
  let failed = false;

  const fail = (message: string) => {
    if (failed) return;
    failed = true;
    send({ type: 'failure', message });
  };

  const arrived = (reason: string) => {
    if (givenUp.has(reason)) return;
    let list = arrivals.get(reason);
    if (!list) arrivals.set(reason, (list = []));
    list.push(monotonicMs());
    if (list.length === settings.subscribers) {
      arrivals.delete(reason);
      send({ type: 'delivered', reason, arrivals: list });
    }
  };

  const onFrame = (text: string) => {
    const reason = REASON.exec(text)?.[1];
    if (reason) arrived(reason);
    else if (!text.includes('"type":"next"') && !text.includes('"type":"connection_ack"')) fail(`a subscriber got ${text.slice(0, 300)}`);
  };

  const overWs = () =>
    new Promise<void>((resolve, reject) => {
      const socket = new WebSocket(settings.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
      sockets.push(socket);
      socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: settings.connectionParams })));
      socket.once('error', reject);
      socket.on('close', (code) => fail(`a subscriber's connection closed with ${code}`));
      socket.on('message', (data) => {
        const text = String(data);
        if (text.startsWith('{"type":"connection_ack"')) {
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: settings.query, variables: settings.variables } }));
          resolve();
          return;
        }
        onFrame(text);
      });
    });

  /** A multipart part holds one event (or a `{}` heartbeat): what comes between two boundaries. */
  const overMultipart = () =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ query: settings.query, variables: settings.variables });
      const headers = { 'content-type': 'application/json', accept: 'multipart/mixed;subscriptionSpec="1.0", application/json', ...settings.connectionParams };
      const call = request(settings.url, { method: 'POST', headers, agent: false }, (response) => {
        if (response.statusCode !== 200) return reject(new Error(`a multipart subscription was answered ${response.statusCode}`));
        response.setEncoding('utf8');
        let buffered = '';
        response.on('data', (chunk: string) => {
          buffered += chunk;
          let end;
          while ((end = buffered.indexOf('\r\n--graphql', 1)) !== -1) {
            const part = buffered.slice(0, end);
            buffered = buffered.slice(end);
            if (part.endsWith('{}')) continue;
            const reason = REASON.exec(part)?.[1];
            if (reason) arrived(reason);
            else fail(`a subscriber got ${part.slice(0, 300)}`);
          }
        });
        response.on('close', () => fail('a subscriber\'s stream ended'));
        resolve();
      });
      call.once('error', reject);
      sockets.push({ terminate: () => call.destroy() });
      call.end(body);
    });
  const subscribe = settings.transport === 'multipart' ? overMultipart : overWs;

  process.on('message', (message: ToSubscribers) => {
    if (message.type !== 'collect') return;
    givenUp.add(message.reason);
    const list = arrivals.get(message.reason) ?? [];
    arrivals.delete(message.reason);
    send({ type: 'collected', reason: message.reason, arrivals: list });
  });
  // The benchmark is gone (or done with us): go too.
  process.once('disconnect', () => {
    for (const socket of sockets) socket.terminate();
    process.exit(0);
  });

  void (async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(CONNECTING_AT_ONCE, settings.subscribers) }, async () => {
        while (next < settings.subscribers) {
          next += 1;
          await subscribe();
        }
      }),
    );
    send({ type: 'ready' });
  })().catch((error: unknown) => fail(`a subscriber could not connect: ${error instanceof Error ? error.message : String(error)}`));
}

if (process.send) main();
