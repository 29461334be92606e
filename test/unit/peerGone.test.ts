import { once } from 'node:events';
import net from 'node:net';
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { onlyPeerGone } from '../../subgraphs/kit/events/wsServer.ts';

/** The error a real socket write fails with once its peer has reset the connection. */
async function writeToGonePeer(): Promise<Error> {
  // Reset once the client is connected and writing.
  const server = net.createServer((socket) => setTimeout(() => socket.resetAndDestroy(), 20));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  try {
    await once(client, 'connect');
    const failed = once(client, 'error') as Promise<[Error]>;
    // Written until the reset is seen: the first writes may still be accepted by the kernel.
    const writing = setInterval(() => client.write(Buffer.alloc(64 * 1024)), 5);
    const [error] = await failed;
    clearInterval(writing);
    return error;
  } finally {
    client.destroy();
    server.close();
  }
}

describe('a subgraph socket whose gateway hung up', () => {
  it('is told apart from a bug: a failed write to a gone peer, as graphql-ws reports it', async () => {
    const gone = await writeToGonePeer();
    expect(['EPIPE', 'ECONNRESET']).toContain((gone as NodeJS.ErrnoException).code);
    expect(onlyPeerGone([new GraphQLError(gone.message, { originalError: gone })])).toBe(true);
  });

  it('is not claimed for anything else, nor for nothing', () => {
    const bug = new TypeError('x is undefined');
    expect(onlyPeerGone([new GraphQLError(bug.message, { originalError: bug })])).toBe(false);
    expect(onlyPeerGone([new GraphQLError('no original error')])).toBe(false);
    expect(onlyPeerGone([])).toBe(false);
  });
});
