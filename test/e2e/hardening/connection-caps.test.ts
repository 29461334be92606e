import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { startGatewayOver, startTestStack } from '../../support/stack.ts';
import { subscribeSse, subscribeWs } from '../../support/subscribers.ts';
import { waitUntil } from '../../support/waitFor.ts';

/**
 * One host holding thousands of idle sockets would leave the gateway no file descriptor for
 * anyone else: MAX_CONNECTIONS_PER_ADDRESS caps what one client address holds open at once.
 */
const { stack } = await startTestStack();
const gatewayWith = (env: Record<string, string>) => startGatewayOver(stack, env, 'capped-gateway');

/** A raw socket to the gateway; `answer` is everything it was sent until it closed. */
function rawSocket(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  let closed = false;
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, connected, answer: () => received, closed: () => closed };
}

const QUERY = JSON.stringify({ query: '{ hashtagTrends { hashtag } }' });
const postOver = (socket: net.Socket) =>
  socket.write(`POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nX-Recognition-Token: ${DEMO_TOKENS.member}\r\nContent-Length: ${QUERY.length}\r\n\r\n${QUERY}`);

describe('connections per client address', () => {
  it('answer a socket past the cap 429 RATE_LIMITED and close it unread, and take one again once a socket closes', async () => {
    const gateway = await gatewayWith({ MAX_CONNECTIONS_PER_ADDRESS: '3' });
    const held = [rawSocket(gateway.url), rawSocket(gateway.url), rawSocket(gateway.url)];
    await Promise.all(held.map((socket) => socket.connected));
    const emulator = stack.services.find((service) => service.name === 'recognition')!.emulatorUrl!;
    await fetch(`${emulator}/__emulator/requests`, { method: 'DELETE' });

    const past = rawSocket(gateway.url);
    await past.connected;
    postOver(past.socket);
    await waitUntil(async () => past.closed(), () => 'the socket past the cap closed');
    expect(past.answer()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(JSON.parse(past.answer().split('\r\n\r\n')[1]!)).toEqual({ errors: [{ message: expect.stringContaining('MAX_CONNECTIONS_PER_ADDRESS'), extensions: { code: 'RATE_LIMITED' } }] });
    // Nothing it sent was served.
    expect(((await (await fetch(`${emulator}/__emulator/requests`)).json()) as unknown[]).length).toBe(0);

    // The held ones are served.
    postOver(held[0]!.socket);
    await waitUntil(async () => held[0]!.answer().includes('hashtagTrends'), () => 'an answer on a held socket');
    expect(held[0]!.answer()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    held[1]!.socket.destroy();
    await waitUntil(async () => held[1]!.closed(), () => 'a held socket closed');
    await waitUntil(async () => (await fetch(`${gateway.url}/health`).then((response) => response.status, () => 0)) === 200, () => 'a new connection taken');
    for (const socket of held) socket.socket.destroy();
  });

  describe('behind a trusted proxy', async () => {
    const gateway = await gatewayWith({ MAX_CONNECTIONS_PER_ADDRESS: '2', TRUSTED_PROXIES: '127.0.0.1' });
    const SUBSCRIPTION = 'subscription { bonusCreated { bonus { id } } }';
    const credential = { 'x-recognition-token': DEMO_TOKENS.readOnly };

    it('leave the proxy’s own sockets uncapped', async () => {
      const sockets = Array.from({ length: 5 }, () => rawSocket(gateway.url));
      await Promise.all(sockets.map((socket) => socket.connected));
      expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
      for (const socket of sockets) socket.socket.destroy();
    });

    it('count each client’s WebSocket, SSE and multipart streams by X-Forwarded-For, and refuse the one past the cap with 429', async () => {
      const first = subscribeWs(gateway.graphqlUrl, SUBSCRIPTION, { connectionParams: credential, upgradeHeaders: { 'x-forwarded-for': '203.0.113.30' } });
      const second = subscribeSse(gateway.graphqlUrl, SUBSCRIPTION, { headers: { ...credential, 'x-forwarded-for': '203.0.113.30' } });
      await waitUntil(async () => (await fetch(`${gateway.url}/metrics`).then((response) => response.text())).includes('gateway_subscription_subscribers 2'), () => 'two subscribers');

      const refusedWs = subscribeWs(gateway.graphqlUrl, SUBSCRIPTION, { connectionParams: credential, upgradeHeaders: { 'x-forwarded-for': '203.0.113.30' } });
      const failure = (await refusedWs.ended) as { message?: string } | undefined;
      expect(failure?.message).toContain('429');
      for (const accept of ['text/event-stream', 'multipart/mixed;subscriptionSpec="1.0", application/json']) {
        const refusedStream = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { ...credential, 'content-type': 'application/json', accept, 'x-forwarded-for': '203.0.113.30' }, body: JSON.stringify({ query: SUBSCRIPTION }) });
        expect(refusedStream.status).toBe(429);
        expect(await refusedStream.json()).toEqual({ errors: [{ message: expect.stringContaining('MAX_CONNECTIONS_PER_ADDRESS'), extensions: { code: 'RATE_LIMITED' } }] });
      }

      // Another client behind the same proxy has its own count.
      const other = subscribeWs(gateway.graphqlUrl, SUBSCRIPTION, { connectionParams: credential, upgradeHeaders: { 'x-forwarded-for': '203.0.113.31' } });
      await waitUntil(async () => (await fetch(`${gateway.url}/metrics`).then((response) => response.text())).includes('gateway_subscription_subscribers 3'), () => 'the other client subscribed');

      // A stream that ends gives its place back.
      first.close();
      await waitUntil(async () => {
        const again = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { ...credential, 'content-type': 'application/json', accept: 'text/event-stream', 'x-forwarded-for': '203.0.113.30' }, body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }) });
        const ok = again.status === 200;
        await again.body?.cancel();
        return ok;
      }, () => 'a place given back');
      for (const subscription of [second, other]) subscription.close();
    });
  });
});
