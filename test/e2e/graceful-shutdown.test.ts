import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { SERVICES } from '../../lib/services.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeMultipart, subscribeSse } from '../support/subscribers.ts';
import { refusesConnections, waitUntil } from '../support/waitFor.ts';

const { stack, emulator } = await startTestStack();
const root = new URL('../../', import.meta.url).pathname;

/** A server as its own process, the way an orchestrator runs and stops it; resolves once it prints where it listens. */
async function startProcess(entry: string, env: Record<string, string>) {
  // Without the test runner's NODE_ENV=test, as deployed: Apollo Server acts on signals itself
  // unless told not to, and once stopped every process at the first SIGTERM with no drain.
  const { NODE_ENV: _runner, ...deployed } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { ...deployed, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const listening = /^[^{\n].*? on (http:\/\/\S+\/graphql)/m;
  await waitUntil(() => listening.test(output) || child.exitCode !== null, () => `${entry} to start (${output})`, 30_000);
  const graphqlUrl = listening.exec(output)?.[1];
  if (!graphqlUrl) throw new Error(`${entry} did not start: ${output}`);
  return { child, graphqlUrl, exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]> };
}

function startGatewayProcess(env: Record<string, string>) {
  const subgraphUrls = Object.fromEntries(stack.services.map((service) => [SERVICES.find((entry) => entry.name === service.name)!.env.subgraphUrl, service.subgraphUrl]));
  return startProcess('gateway/main.ts', { ...subgraphUrls, GATEWAY_PORT: '0', ...env });
}

/** A request in flight once this resolves: the upstream takes 2.5 s to answer it. */
async function slowRequestInFlight(graphqlUrl: string): Promise<{ answer: Promise<Response> }> {
  const recognition = emulator('recognition');
  await recognition.fault({ path: '/api/v1/redemptions/*', latencyMs: 2500, times: 1 });
  await recognition.clearRequests();
  const inFlight = fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member },
    body: JSON.stringify({ query: '{ redemption(id: "rd_001") { id state } }' }),
  });
  await waitUntil(async () => (await recognition.requests()).some((request) => request.path.startsWith('/api/v1/redemptions/')), () => 'the upstream call to start');
  return { answer: inFlight };
}

/** The request in flight is answered in full, then the process stops listening and exits 0. */
async function finishesThenExits(inFlight: Promise<Response>, origin: string, exited: Promise<[number | null, NodeJS.Signals | null]>): Promise<void> {
  const answer = await inFlight;
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ data: { redemption: { id: 'rd_001', state: expect.any(String) } } });
  await refusesConnections(origin);
  expect(await exited).toEqual([0, null]);
}

describe('SIGTERM', () => {
  it('turns /ready to 503, tells subscribers to reconnect (graphql-ws, SSE, multipart), finishes what is in flight, refuses new connections, and exits 0', async () => {
    const { child, graphqlUrl, exited } = await startGatewayProcess({ GATEWAY_DRAIN_DELAY_MS: '1500', GATEWAY_SHUTDOWN_GRACE_MS: '20000' });
    const origin = new URL(graphqlUrl).origin;

    const socket = new WebSocket(graphqlUrl.replace('http', 'ws'), 'graphql-transport-ws');
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-recognition-token': DEMO_TOKENS.member } }));
    await once(socket, 'message');
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;
    // An SSE subscriber too: its stream ends at once, so its client reconnects elsewhere.
    const sse = subscribeSse(graphqlUrl, 'subscription { bonusCreated { cursor } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    // A multipart subscriber is told why its stream ends, in the protocol's transport error.
    const multipart = subscribeMultipart(graphqlUrl, 'subscription { bonusCreated { cursor } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    await waitUntil(async () => /^gateway_subscription_subscribers 2$/m.test(await (await fetch(`${origin}/metrics`)).text()), () => 'the SSE and multipart subscriptions to open');

    const { answer: inFlight } = await slowRequestInFlight(graphqlUrl);
    let answered = false;
    void inFlight.then(() => (answered = true));

    child.kill('SIGTERM');
    const [code, reason] = await closed;
    expect(code).toBe(1012);
    expect(reason.toString()).toContain('reconnect');
    // Ended by the server at the start of the drain (the request in flight is still waiting on the
    // upstream), without a result or an error event: graphql-sse reports a dropped stream.
    expect(await sse.ended).toBeInstanceOf(Error);
    expect(answered).toBe(false);
    expect(sse.results).toEqual([]);
    await multipart.ended;
    expect(multipart.fatal()).toEqual([{ message: expect.stringContaining('the gateway is restarting: subscribe again'), extensions: { code: 'UPSTREAM_UNAVAILABLE' } }]);
    expect(multipart.closedCleanly()).toBe(true);
    const ready = await fetch(`${origin}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ready: false, draining: true });
    // A graphql-ws client reconnecting before the balancer notices is sent on, not answered as a GET.
    const again = new WebSocket(graphqlUrl.replace('http', 'ws'), 'graphql-transport-ws');
    // Ending a handshake the server refused is reported as an error: expected here.
    again.on('error', () => {});
    const [, refused] = (await once(again, 'unexpected-response')) as [unknown, { statusCode: number; headers: Record<string, string> }];
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    again.terminate();

    await finishesThenExits(inFlight, origin, exited);
  }, 60_000);
});

describe('SIGTERM to a subgraph', () => {
  it('closes its subscribers with 1012, turns /health to 503, finishes what is in flight, refuses new connections, and exits 0', async () => {
    const recognition = emulator('recognition');
    const { child, graphqlUrl, exited } = await startProcess('subgraphs/recognition/main.ts', {
      RECOGNITION_API_URL: recognition.url,
      RECOGNITION_SUBGRAPH_PORT: '0',
      SUBGRAPH_DRAIN_DELAY_MS: '1500',
      SUBGRAPH_SHUTDOWN_GRACE_MS: '20000',
    });
    const origin = new URL(graphqlUrl).origin;
    const socket = new WebSocket(graphqlUrl.replace('http', 'ws'), 'graphql-transport-ws');
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-recognition-token': DEMO_TOKENS.member } }));
    await once(socket, 'message');
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { bonusCreated { cursor } }' } }));
    await waitUntil(async () => /^recognition_event_subscriptions 1/m.test(await (await fetch(`${origin}/metrics`)).text()), () => 'the subscription to follow the log');
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;

    const { answer: inFlight } = await slowRequestInFlight(graphqlUrl);

    child.kill('SIGTERM');
    const [code, reason] = await closed;
    expect(code).toBe(1012);
    expect(reason.toString()).toContain('resubscribe from your last cursor');
    const health = await fetch(`${origin}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'draining', subgraph: 'recognition' });

    await finishesThenExits(inFlight, origin, exited);
  }, 60_000);
});
