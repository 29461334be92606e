import net from 'node:net';
import { closeAfterFile } from './afterFile.ts';

/**
 * A TCP server that accepts connections, reads everything and answers nothing: a Redis (or any
 * peer) that hangs rather than refuses. Closed after the file.
 */
export async function startSilentServer(): Promise<{ url: string }> {
  const held: net.Socket[] = [];
  const server = net.createServer((socket) => held.push(socket.on('data', () => undefined)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfterFile(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}` };
}
