import http from 'node:http';
import { afterAll, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { ExecutionResult } from 'graphql';
import { openUpstream } from '../../../gateway/subscriptions/upstream.ts';
import { listen } from '../../../lib/http.ts';
import { capturedLogs, testLogger } from '../../support/logs.ts';
import { waitUntil } from '../../support/waitFor.ts';

/**
 * A subgraph's event stream is an input like any other: a message past the gateway's bound
 * (MAX_SUBGRAPH_RESPONSE_BYTES) closes that socket before it is read whole (ws would take 100 MiB),
 * and the stream resumes. Graphql-transport-ws stubs play the subgraph: each connection sends one
 * event, oversized or small as the stub decides.
 */
const CAP = 64 * 1024;
const stubs: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stubs) await stop();
});

async function stubSubgraph(oversized: (connection: number) => boolean) {
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  const stub = { connections: 0, closeCodes: [] as number[], url: '' };
  wss.on('connection', (socket) => {
    stub.connections += 1;
    const big = oversized(stub.connections);
    socket.on('close', (code) => stub.closeCodes.push(code));
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; id?: string };
      if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
      if (message.type === 'subscribe') {
        const payload = { data: { event: big ? 'x'.repeat(4 * CAP) : 'small' } };
        socket.send(JSON.stringify({ type: 'next', id: message.id, payload }));
      }
    });
  });
  const started = await listen(server, 0);
  stub.url = `${started.url}/graphql`;
  stubs.push(async () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    await started.close();
  });
  return stub;
}

it('closes the socket on an event past the bound, reads none of it, and resumes the stream', async () => {
  const stub = await stubSubgraph((connection) => connection === 1);
  const { closeCodes } = stub;
  const results: ExecutionResult[] = [];
  const upstream = openUpstream({
    url: stub.url,
    connectionParams: {},
    request: () => ({ query: 'subscription { event }', variables: {} }),
    onResult: (result) => results.push(result),
    onEnd: () => {},
    logger: testLogger('upstream-events'),
    initialBackoffMs: 10,
    maxMessageBytes: CAP,
  });
  try {
    await waitUntil(async () => results.length > 0, () => 'an event after resuming');
    expect(results).toEqual([{ data: { event: 'small' } }]);
    expect(stub.connections).toBeGreaterThanOrEqual(2);
    // The gateway's side closed the first socket as too big a message.
    await waitUntil(async () => closeCodes.length > 0, () => 'the first socket closed');
    expect(closeCodes[0]).toBe(1009);
    expect(capturedLogs.some((line) => line.includes('subgraph subscription interrupted'))).toBe(true);
  } finally {
    upstream.close();
  }
});

it('ends the stream with UPSTREAM_ERROR when resuming meets the oversized event again, instead of reconnecting for ever', async () => {
  const stub = await stubSubgraph(() => true);
  const results: ExecutionResult[] = [];
  let ended: unknown;
  let endings = 0;
  const upstream = openUpstream({
    url: stub.url,
    connectionParams: {},
    request: () => ({ query: 'subscription { event }', variables: {} }),
    onResult: (result) => results.push(result),
    onEnd: (errors) => {
      endings += 1;
      ended = errors;
    },
    logger: testLogger('upstream-events'),
    initialBackoffMs: 10,
    maxMessageBytes: CAP,
    service: 'recognition',
  });
  try {
    await waitUntil(async () => ended !== undefined, () => 'the stream ended');
    expect(ended).toEqual([{ message: expect.stringContaining(`larger than the gateway reads (${CAP} bytes)`), extensions: { code: 'UPSTREAM_ERROR', service: 'recognition' } }]);
    expect(results).toEqual([]);
    // Once to resume, in case the first was a passing fault; not again.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stub.connections).toBe(2);
    expect(endings).toBe(1);
    expect(stub.closeCodes.slice(0, 2)).toEqual([1009, 1009]);
    expect(capturedLogs.some((line) => line.includes('past the bound again on resuming'))).toBe(true);
  } finally {
    upstream.close();
  }
});
