import net, { type Socket } from 'node:net';

export interface LaggingTcpProxy {
  /** Where to connect instead of the target: `redis://127.0.0.1:<port>` for a Redis target. */
  port: number;
  /** How long what the target sends is held before the client gets it; in order, whatever the lag. */
  lagMs: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy that holds what the target sends for `lagMs` before passing it on, as a slow path
 * from a server to one of its clients would; what the client sends goes through at once. A target
 * that refuses or drops the connection drops the client's too.
 */
export async function startLaggingTcpProxy(targetPort: number): Promise<LaggingTcpProxy> {
  const sockets = new Set<Socket>();
  const proxy: LaggingTcpProxy = { port: 0, lagMs: 0, close: async () => undefined };
  const server = net.createServer((client) => {
    const target = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(target);
    // Chunks leave in the order they came: each waits for its own lag and for the one before it.
    let previous = Promise.resolve();
    target.on('data', (chunk: Buffer) => {
      const due = Date.now() + proxy.lagMs;
      previous = previous.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (!client.destroyed) client.write(chunk);
      });
    });
    client.pipe(target);
    const end = () => {
      client.destroy();
      target.destroy();
      sockets.delete(client);
      sockets.delete(target);
    };
    client.on('error', end).on('close', end);
    target.on('error', end).on('close', () => void previous.then(end));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
