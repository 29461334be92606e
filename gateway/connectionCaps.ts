import type http from 'node:http';
import type { Socket } from 'node:net';
import { addressBucket } from '../lib/addressBuckets.ts';
import { clientAddress, type TrustedProxies } from '../lib/trustedProxies.ts';

/** A stream refused behind a trusted proxy, on either transport. */
export const TOO_MANY_STREAMS = { errors: [{ message: 'too many streams open from this address (MAX_CONNECTIONS_PER_ADDRESS)', extensions: { code: 'RATE_LIMITED' } }] };

const REFUSED_BODY = JSON.stringify({ errors: [{ message: 'too many connections open from this address (MAX_CONNECTIONS_PER_ADDRESS)', extensions: { code: 'RATE_LIMITED' } }] });
/** What a socket past the cap is told, whatever it sends: nothing it sends is read. */
const REFUSED = `HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(REFUSED_BODY)}\r\n\r\n${REFUSED_BODY}`;

export interface ConnectionCaps {
  /** Counts every socket a peer that is not a trusted proxy opens; past the cap, answers 429 and closes it. */
  attach(server: http.Server): void;
  /**
   * A WebSocket or SSE stream about to open: counted per client when it comes through a trusted
   * proxy (the proxy's own sockets are not capped). Returns what releases it, or undefined past the cap.
   */
  admitStream(req: http.IncomingMessage): (() => void) | undefined;
}

/**
 * Connections one client address may hold open at once (`MAX_CONNECTIONS_PER_ADDRESS`): each idle
 * socket holds a file descriptor and memory, and one host opening thousands would leave the
 * gateway none for anyone else. A client reaching the gateway directly is counted by its sockets;
 * one behind a trusted proxy (whose sockets carry many clients) by the streams it holds, named by
 * `X-Forwarded-For`. IPv6 addresses count by their /64. 0 turns the caps off.
 */
export function createConnectionCaps(max: number, proxies: TrustedProxies): ConnectionCaps {
  const sockets = new Map<string, number>();
  const streams = new Map<string, number>();
  const take = (counts: Map<string, number>, key: string): (() => void) | undefined => {
    const held = counts.get(key) ?? 0;
    if (held >= max) return undefined;
    counts.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (counts.get(key) ?? 1) - 1;
      if (left > 0) counts.set(key, left);
      else counts.delete(key);
    };
  };

  return {
    attach(server) {
      if (max <= 0) return;
      // Before the HTTP server's own listener: a refused socket is never read.
      server.prependListener('connection', (socket: Socket) => {
        const peer = socket.remoteAddress;
        if (!peer || proxies.trusts(peer)) return;
        const release = take(sockets, addressBucket(peer));
        if (!release) {
          socket.pause();
          socket.end(REFUSED, () => socket.destroy());
          return;
        }
        socket.once('close', release);
      });
    },
    admitStream(req) {
      const noop = () => undefined;
      if (max <= 0 || !proxies.trusts(req.socket.remoteAddress)) return noop;
      const client = clientAddress(req, proxies);
      return client ? take(streams, addressBucket(client)) : noop;
    },
  };
}
