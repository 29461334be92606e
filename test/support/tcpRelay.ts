import net, { type Socket } from 'node:net';

/** What a relay does with a new connection. */
export type RelayMode =
  /** Connects it to the target. */
  | 'pass'
  /** Drops it at once: a restart, a failover. */
  | 'refuse'
  /** Holds it and answers nothing: a process stopped with SIGSTOP, a black-holed network. */
  | 'ignore';

export interface TcpRelay {
  /** The target's URL with the relay's address in place of the target's. */
  url: string;
  /**
   * Treats new connections as `mode`, and drops those it carries that `mode` would not carry, both
   * ends seeing them close: every one for 'refuse' and 'ignore', those it held unanswered for 'pass'.
   */
  set(mode: RelayMode): void;
  /** Freezes the connections open now: nothing more passes either way and neither end hears of it. New ones pass. */
  freeze(): void;
  /** How long what the target sends is held before the client gets it (in order, whatever the lag). */
  lagMs: number;
  /** Connections accepted so far, whatever became of them. */
  readonly accepted: number;
  close(): Promise<void>;
}

/** A TCP relay in front of a real server, which a test turns off, silences, freezes or slows at the same address. */
export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const { hostname, port } = new URL(target);
  let mode: RelayMode = 'pass';
  const carried = new Set<Socket>();
  const held = new Set<Socket>();
  const running = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  const carry = (socket: Socket) => {
    carried.add(socket);
    socket.on('error', () => undefined).on('close', () => carried.delete(socket));
  };
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted += 1;
    carry(client);
    if (mode === 'refuse') return void client.destroy();
    if (mode === 'ignore') {
      held.add(client);
      client.on('close', () => held.delete(client));
      return void client.resume();
    }
    const upstream = net.connect(Number(port), hostname);
    carry(upstream);
    const pair = { client, upstream, frozen: false };
    running.add(pair);
    client.on('data', (chunk: Buffer) => void (pair.frozen || upstream.write(chunk)));
    // Each chunk waits for its own lag and for the one before it.
    let previous = Promise.resolve();
    upstream.on('data', (chunk: Buffer) => {
      const due = Date.now() + relay.lagMs;
      previous = previous.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (!pair.frozen && !client.destroyed) client.write(chunk);
      });
    });
    client.on('close', () => {
      running.delete(pair);
      upstream.destroy();
    });
    // What the target sent before it closed still reaches the client.
    upstream.on('close', () => void previous.then(() => client.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const drop = (sockets: Set<Socket>) => {
    for (const socket of sockets) socket.destroy();
  };
  const relay: TcpRelay = {
    url: url.href,
    set(next) {
      mode = next;
      drop(next === 'pass' ? held : carried);
    },
    freeze() {
      for (const pair of running) {
        pair.frozen = true;
        pair.client.pause();
        pair.upstream.pause();
      }
      running.clear();
    },
    lagMs: 0,
    get accepted() {
      return accepted;
    },
    async close() {
      drop(carried);
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return relay;
}
