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
