import { describe, expect, it, onTestFinished, vi } from 'vitest';
import WebSocket from 'ws';
import { startTestStack } from '../support/stack.ts';
import { sendOversizedFrame } from '../support/transports.ts';

/**
 * QA10 defect 4: a graphql-ws frame over the cap is the client's mistake, answered with close 1009.
 * graphql-ws's own handler of a socket's `error` printed "Internal error … Please check your
 * implementation" and a stack to stderr, outside the structured logger. The gateway runs in this
 * process, so whatever it writes to stderr is seen here.
 */
const LIMIT = 64 * 1024;
const t = await startTestStack({ MAX_BODY_BYTES: String(LIMIT) });

function watchStderr() {
  const consoleError = vi.spyOn(console, 'error');
  const stderr = vi.spyOn(process.stderr, 'write');
  onTestFinished(() => {
    consoleError.mockRestore();
    stderr.mockRestore();
  });
  return () => [...consoleError.mock.calls.map((call) => call.map(String).join(' ')), ...stderr.mock.calls.map((call) => String(call[0]))];
}

/** A frame no client library sends: the RSV1 bit set on a connection that agreed no extension (ws: WS_ERR_UNEXPECTED_RSV_1). */
function sendInvalidFrame(url: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    socket.on('open', () => {
      // FIN + RSV1 + text, masked, length 2.
      const raw = (socket as unknown as { _socket: import('node:net').Socket })._socket;
      raw.write(Buffer.from([0xc1, 0x82, 0, 0, 0, 0, 0x7b, 0x7d]));
    });
    socket.on('close', (code) => resolve(code));
    socket.on('error', () => undefined);
  });
}

describe('a graphql-ws client that breaks the protocol', () => {
  it('is closed with 1009 for a frame over the cap, and nothing is written to stderr', async () => {
    const written = watchStderr();
    expect(await sendOversizedFrame(t.graphqlUrl, LIMIT + 1)).toBe(1009);
    expect(await sendOversizedFrame(t.graphqlUrl, LIMIT + 1)).toBe(1009);
    expect(written()).toEqual([]);
    expect((await fetch(`${t.stack.gateway.url}/health`)).status).toBe(200);
  });

  it('is closed with 1002 for an invalid frame, and nothing is written to stderr', async () => {
    const written = watchStderr();
    expect(await sendInvalidFrame(t.graphqlUrl)).toBe(1002);
    expect(written()).toEqual([]);
  });
});

describe('a graphql-ws client that leaves while its query runs', () => {
  it('has its operation cancelled without an error line: any client could write one with a stack', { timeout: 20_000 }, async () => {
    // The stack logs into this file's captured lines; only those written from here on count.
    const { capturedLogs } = await import('../support/logs.ts');
    const from = capturedLogs.length;
    const recognition = t.emulator('recognition');
    await recognition.fault({ path: '*', latencyMs: 300 });
    onTestFinished(() => recognition.reset());
    for (let run = 0; run < 3; run += 1) {
      await new Promise<void>((resolve) => {
        const socket = new WebSocket(t.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
        socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-recognition-token': 'demo-admin-token-7f3c9a1e2b4d8c6f' } })));
        socket.on('message', (data) => {
          if (!String(data).includes('connection_ack')) return;
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ rewardCatalog { name } }' } }));
          setTimeout(() => socket.terminate(), 50);
        });
        socket.on('close', () => resolve());
        socket.on('error', () => undefined);
      });
    }
    // The upstream answers after 300 ms; by then every operation was cut off.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const lines = capturedLogs.slice(from).join('');
    expect(lines).toContain('operation cancelled');
    expect(lines).not.toContain('unexpected error');
  });
});
