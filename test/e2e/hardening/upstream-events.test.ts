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
 * and the stream resumes. A graphql-transport-ws stub plays the subgraph: its first connection
 * sends one oversized event, the next ones a small one.
 */
const CAP = 64 * 1024;
const server = http.createServer();
const wss = new WebSocketServer({ server });
let connections = 0;
const closeCodes: number[] = [];
wss.on('connection', (socket) => {
  connections += 1;
  const oversized = connections === 1;
  socket.on('close', (code) => closeCodes.push(code));
  socket.on('message', (raw) => {
    const message = JSON.parse(String(raw)) as { type: string; id?: string };
    if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
    if (message.type === 'subscribe') {
      const payload = { data: { event: oversized ? 'x'.repeat(4 * CAP) : 'small' } };
      socket.send(JSON.stringify({ type: 'next', id: message.id, payload }));
    }
  });
});
const started = await listen(server, 0);
afterAll(async () => {
  for (const client of wss.clients) client.terminate();
  wss.close();
  await started.close();
});

it('closes the socket on an event past the bound, reads none of it, and resumes the stream', async () => {
  const results: ExecutionResult[] = [];
  const upstream = openUpstream({
    url: `${started.url}/graphql`,
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
    expect(connections).toBeGreaterThanOrEqual(2);
    // The gateway's side closed the first socket as too big a message.
    await waitUntil(async () => closeCodes.length > 0, () => 'the first socket closed');
    expect(closeCodes[0]).toBe(1009);
    expect(capturedLogs.some((line) => line.includes('subgraph subscription interrupted'))).toBe(true);
  } finally {
    upstream.close();
  }
});
