import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { SERVICES } from '../../lib/services.ts';
import { startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeSse } from '../support/subscribers.ts';
import { waitUntil } from '../support/waitFor.ts';

const { stack, emulator } = await startTestStack();
const root = new URL('../../', import.meta.url).pathname;

/** The gateway as its own process, the way an orchestrator runs and stops it. */
async function startGatewayProcess(env: Record<string, string>) {
  const subgraphUrls = Object.fromEntries(stack.services.map((service) => [SERVICES.find((entry) => entry.name === service.name)!.env.subgraphUrl, service.subgraphUrl]));
  const child = spawn(process.execPath, ['--import', 'tsx', 'gateway/main.ts'], {
    cwd: root,
    env: { ...process.env, ...subgraphUrls, GATEWAY_PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitUntil(() => /gateway on (\S+)/.test(output) || child.exitCode !== null, () => `the gateway process to start (${output})`, 30_000);
  const graphqlUrl = /gateway on (\S+)/.exec(output)?.[1];
  if (!graphqlUrl) throw new Error(`the gateway did not start: ${output}`);
  return { child, graphqlUrl, exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]> };
}

describe('SIGTERM', () => {
  it('turns /ready to 503, tells subscribers to reconnect, finishes what is in flight, refuses new connections, and exits 0', async () => {
    const { child, graphqlUrl, exited } = await startGatewayProcess({ GATEWAY_DRAIN_DELAY_MS: '1500', GATEWAY_SHUTDOWN_GRACE_MS: '20000' });
    const origin = new URL(graphqlUrl).origin;

    const socket = new WebSocket(graphqlUrl.replace('http', 'ws'), 'graphql-transport-ws');
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-recognition-token': DEMO_TOKENS.member } }));
    await once(socket, 'message');
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;
    // An SSE subscriber too: its stream ends at once, so its client reconnects elsewhere.
    const sse = subscribeSse(graphqlUrl, 'subscription { bonusCreated { cursor } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    await waitUntil(async () => /^gateway_subscription_subscribers [1-9]/m.test(await (await fetch(`${origin}/metrics`)).text()), () => 'the SSE subscription to open');

    // A request in flight: the upstream takes a while to answer it.
    const recognition = emulator('recognition');
    await recognition.fault({ path: '/api/v1/redemptions/*', latencyMs: 2500, times: 1 });
    await recognition.clearRequests();
    const inFlight = fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member },
      body: JSON.stringify({ query: '{ redemption(id: "rd_001") { id state } }' }),
    });
    let answered = false;
    void inFlight.then(() => (answered = true));
    await waitUntil(async () => (await recognition.requests()).some((request) => request.path.startsWith('/api/v1/redemptions/')), () => 'the upstream call to start');

    child.kill('SIGTERM');
    const [code, reason] = await closed;
    expect(code).toBe(1012);
    expect(reason.toString()).toContain('reconnect');
    // Ended by the server at the start of the drain (the request in flight is still waiting on the
    // upstream), without a result or an error event: graphql-sse reports a dropped stream.
    expect(await sse.ended).toBeInstanceOf(Error);
    expect(answered).toBe(false);
    expect(sse.results).toEqual([]);
    const ready = await fetch(`${origin}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ready: false, draining: true });

    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ data: { redemption: { id: 'rd_001', state: expect.any(String) } } });

    await waitUntil(
      async () => {
        try {
          await fetch(`${origin}/health`);
          return false;
        } catch {
          return true;
        }
      },
      () => 'new connections to be refused',
      20_000,
    );
    expect(await exited).toEqual([0, null]);
  }, 60_000);
});

describe('a subgraph stopping', () => {
  it('closes its subscribers with 1012 (service restart), so the gateway resubscribes at once from its last cursor', async () => {
    const subgraph = await startRecognitionSubgraph(emulator('recognition').url, {});
    const socket = new WebSocket(subgraph.graphqlUrl.replace('http', 'ws'), 'graphql-transport-ws');
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-recognition-token': DEMO_TOKENS.member } }));
    await once(socket, 'message');
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { bonusCreated { cursor } }' } }));
    await waitUntil(async () => /^recognition_event_subscriptions 1/m.test(await (await fetch(`${subgraph.url}/metrics`)).text()), () => 'the subscription to follow the log');
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;
    await subgraph.close();
    const [code, reason] = await closed;
    expect(code).toBe(1012);
    expect(reason.toString()).toContain('resubscribe from your last cursor');
  });
});
