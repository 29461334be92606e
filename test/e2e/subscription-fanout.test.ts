import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { testLogger } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';

// Identical subscribers share one group: one execution per event, and (by default) one serialisation.
const t = await startTestStack();
const subgraphUrl = t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
// The same graph with each payload serialised per subscriber by graphql-ws and graphql-sse: what the wire looked like before.
const perSubscriber = await startGateway(
  readGatewayConfig({ GATEWAY_SHARED_PAYLOADS: 'off' }, { port: 0, subgraphUrls: Object.fromEntries(t.stack.services.map((service) => [service.name, service.subgraphUrl])) }),
  testLogger('per-subscriber-gateway'),
);
afterAll(() => perSubscriber.close());

const member = { 'x-recognition-token': DEMO_TOKENS.member };
const QUERY = 'subscription Feed($tag: String) { bonusCreated(filter: { hashtag: $tag }) { id occurredAt cursor bonus { id amount reason hashtag giver { id displayName } receivers { id } } } }';
const VARIABLES = { tag: '#fanout' };
/** Client-chosen ids, some of which JSON must escape. */
const IDS = ['1', 'id with "quotes" and a \\ backslash', 'line\u2028separator \u00e9 💡', '</script>'];

interface RawSocket {
  /** The text of every `next` frame, by operation id, as it came off the wire. */
  frames: Map<string, string[]>;
  close(): void;
}

/** A graphql-transport-ws client that keeps each frame's exact text. */
async function rawSubscriber(graphqlUrl: string, ids: readonly string[]): Promise<RawSocket> {
  const socket = new WebSocket(graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const frames = new Map<string, string[]>(ids.map((id) => [id, []]));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: member })));
    socket.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      const text = String(data);
      const message = JSON.parse(text) as { type: string; id?: string };
      if (message.type === 'connection_ack') resolve();
      if (message.type === 'next') frames.get(message.id!)!.push(text);
    });
  });
  for (const id of ids) socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: QUERY, variables: VARIABLES } }));
  return { frames, close: () => socket.close() };
}

/** A GraphQL over SSE subscriber that keeps the stream's exact text. */
function rawSseSubscriber(graphqlUrl: string) {
  const controller = new AbortController();
  let text = '';
  const reading = (async () => {
    const response = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { ...member, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: QUERY, variables: VARIABLES }),
      signal: controller.signal,
    });
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
  })().catch(() => undefined);
  return {
    events: () => text.split('\n\n').filter((event) => event.startsWith('event: next')).map((event) => `${event}\n\n`),
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

async function metric(graphqlUrl: string, name: string): Promise<number> {
  const text = await (await fetch(graphqlUrl.replace(/\/graphql$/, '/metrics'))).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

describe('subscription fan-out', () => {
  it('serialises each event once per group and sends every subscriber the frame graphql-ws and graphql-sse would have sent', async () => {
    const gateways = [t.graphqlUrl, perSubscriber.graphqlUrl];
    // Per gateway: two sockets holding the ids between them, and one SSE stream: one group of five.
    const sockets = await Promise.all(gateways.map(async (url) => [await rawSubscriber(url, IDS.slice(0, 2)), await rawSubscriber(url, IDS.slice(2))]));
    const streams = gateways.map((url) => rawSseSubscriber(url));
    try {
      for (const url of gateways) await waitUntil(async () => (await metric(url, 'gateway_subscription_subscribers')) === IDS.length + 1, () => `every subscriber of ${url} in place`);
      await waitForEventSubscriptions(subgraphUrl, 2);
      expect(await metric(t.graphqlUrl, 'gateway_subscription_upstreams')).toBe(1);

      const serialisedBefore = await metric(t.graphqlUrl, 'gateway_stream_payloads_serialized_total');
      const events = 3;
      for (let index = 0; index < events; index += 1) {
        await t.emulator('recognition').control('bonuses', { giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: 'fanout', amount: 5 + index, reason: `fan-out "${index}" \u2028 ok` });
      }
      const all = () => sockets.flat().flatMap((socket) => [...socket.frames.values()]);
      await waitUntil(() => all().every((frames) => frames.length === events) && streams.every((stream) => stream.events().length === events), () => 'every event at every subscriber');

      // One serialisation per event for the five subscribers of the group, whichever their transport.
      expect((await metric(t.graphqlUrl, 'gateway_stream_payloads_serialized_total')) - serialisedBefore).toBe(events);
      // The four graphql-ws subscribers' frames were written straight to their sockets, not through graphql-ws's loop.
      expect(await metric(t.graphqlUrl, 'gateway_stream_frames_written_total')).toBe(events * IDS.length);
      // Off, nothing counts them: graphql-ws and graphql-sse serialise each subscriber's copy themselves.
      expect(await metric(perSubscriber.graphqlUrl, 'gateway_stream_payloads_serialized_total')).toBeNaN();

      const [shared, separate] = sockets.map((pair) => new Map(pair.flatMap((socket) => [...socket.frames])));
      for (const id of IDS) {
        const frames = shared!.get(id)!;
        // Byte for byte what the per-subscriber gateway sent for the same id and the same events...
        expect(frames).toEqual(separate!.get(id));
        for (const frame of frames) {
          // ...which is graphql-ws's own serialisation of the message.
          const message = JSON.parse(frame) as { id: string; type: string; payload: unknown };
          expect(message.id).toBe(id);
          expect(frame).toBe(JSON.stringify({ id, type: 'next', payload: message.payload }));
        }
      }
      const payloads = IDS.map((id) => shared!.get(id)!.map((frame) => JSON.stringify((JSON.parse(frame) as { payload: unknown }).payload)));
      for (const list of payloads) expect(list).toEqual(payloads[0]);
      expect(JSON.parse(payloads[0]![2]!)).toMatchObject({ data: { bonusCreated: { bonus: { amount: 7, reason: 'fan-out "2" \u2028 ok', hashtag: '#fanout' } } } });

      const [sharedSse, separateSse] = streams.map((stream) => stream.events());
      expect(sharedSse).toEqual(separateSse);
      expect(sharedSse!.map((event) => event.slice('event: next\ndata: '.length, -2))).toEqual(payloads[0]);
    } finally {
      for (const socket of sockets.flat()) socket.close();
      await Promise.all(streams.map((stream) => stream.close()));
    }
    await waitForEventSubscriptions(subgraphUrl, 0);
  });
});
