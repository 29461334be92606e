import http from 'node:http';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../../gateway/config.ts';
import { startGateway } from '../../../gateway/server.ts';
import { listen } from '../../../lib/http.ts';
import { testLogger } from '../../support/logs.ts';
import { startTestStack } from '../../support/stack.ts';
import { waitUntil } from '../../support/waitFor.ts';

/**
 * A subscriber that leaves while the gateway is still opening its stream to the subgraph, and the
 * subgraph then hangs up: graphql-ws's dispose rejected with the failed connection, and that
 * rejection, unheard, ended the gateway's process (vitest fails this file on it).
 */
const t = await startTestStack();
const handshakes: Duplex[] = [];
// A recognition subgraph that takes WebSocket upgrades and never answers them.
const hanging = http.createServer((_req, res) => res.end());
hanging.on('upgrade', (_req, socket: Duplex) => void handshakes.push(socket));
const started = await listen(hanging, 0, '127.0.0.1');
afterAll(() => {
  for (const socket of handshakes) socket.destroy();
  return started.close();
});
const subgraphUrls = { ...Object.fromEntries(t.stack.services.map((service) => [service.name, service.subgraphUrl])), recognition: `${started.url}/graphql` };
const gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls }), testLogger('upstream-handshake'));
afterAll(() => gateway.close());

describe('a subgraph that hangs up during the handshake after the subscriber left', () => {
  it('leaves the gateway serving', async () => {
    const stream = await request(gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-recognition-token': DEMO_TOKENS.member },
      body: JSON.stringify({ query: 'subscription { bonusCreated { id } }' }),
    });
    await waitUntil(() => handshakes.length === 1, () => 'the gateway to open its stream to the subgraph');
    stream.body.destroy();
    await waitUntil(() => gateway.subscriptions.stats().subscribers === 0, () => 'the subscriber to be gone');
    handshakes[0]!.destroy();
    // A turn for the failed connection to reach whoever waits on it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await request(`${new URL(gateway.graphqlUrl).origin}/health`)).statusCode).toBe(200);
  });
});
