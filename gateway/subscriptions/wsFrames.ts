import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { PAYLOAD_PLACEHOLDER_JSON, type SharedPayloads } from './sharedPayloads.ts';
import type { PushSink } from './pushIterator.ts';

type SendOptions = { mask?: boolean; binary?: boolean; compress?: boolean; fin?: boolean };
type SendCallback = (error?: Error) => void;

const NEXT_TAIL = Buffer.from('}');

/** graphql-ws's `next` message for `id` around a payload already serialised, byte for byte as it would write it. */
export function nextFrame(id: string, payload: Buffer): Buffer {
  const head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  return Buffer.concat([Buffer.from(head), payload, NEXT_TAIL]);
}

/**
 * The WebSocket frame (RFC 6455 §5.2: FIN, text, unmasked as a server's are) carrying `message`,
 * header and all, so a socket can be given it in one write.
 */
export function textFrame(message: Buffer): Buffer {
  const length = message.length;
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81;
  if (length < 126) frame[1] = length;
  else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  message.copy(frame, headerLength);
  return frame;
}

/** An event's whole `next` frames by operation id: subscribers mostly share theirs (each connection's first is "1"), so mostly one frame for all. */
const framesOfPayload = new WeakMap<Buffer, Map<string, Buffer>>();
/** Ids whose frame is kept per event; a client choosing ids of its own gets its frame built for it. */
const FRAMES_KEPT_PER_EVENT = 16;

function sharedNextFrame(id: string, payload: Buffer): Buffer {
  let frames = framesOfPayload.get(payload);
  if (!frames) framesOfPayload.set(payload, (frames = new Map()));
  let frame = frames.get(id);
  if (!frame) {
    frame = textFrame(nextFrame(id, payload));
    if (frames.size < FRAMES_KEPT_PER_EVENT) frames.set(id, frame);
  }
  return frame;
}

/**
 * Sockets written to in this turn of the event loop, held corked until the next: when events come
 * faster than the loop turns, a subscriber's frames of several events leave in one system call.
 */
const corked = new Set<Duplex>();
const uncorkAll = () => {
  for (const socket of corked) socket.uncork();
  corked.clear();
};

/**
 * Operation `id`'s events written straight to the subscriber's TCP socket as they come, each a
 * `next` frame built once per event around the payload serialised once for the group: no pull,
 * envelope, promise or frame header per subscriber, as graphql-ws's loop and `ws` would make. Once
 * the socket holds its high-water mark unsent, the subscriber's events wait in its own bounded
 * queue (as references to the group's results) until the socket drains, so a reader that stalls
 * costs no more frames than one socket buffer's worth, whatever id it chose.
 *
 * `ws` writes to the same socket (graphql-ws's own messages, pings, the close); it writes each
 * message synchronously and in order unless it is compressing, so this is used only on a socket
 * that negotiated no extension (the server offers none).
 */
export function createNextFrameSink(webSocket: WebSocket, tcp: Duplex, id: string, payloads: Pick<SharedPayloads, 'bytesOf' | 'frameWritten'>): PushSink<object> {
  return {
    write(result) {
      // graphql-ws sends nothing on a closing socket either; its close ends the subscription.
      if (webSocket.readyState !== WebSocket.OPEN) return true;
      if (!corked.has(tcp)) {
        if (corked.size === 0) setImmediate(uncorkAll);
        tcp.cork();
        corked.add(tcp);
      }
      payloads.frameWritten();
      return tcp.write(sharedNextFrame(id, payloads.bytesOf(result)));
    },
    onWritable(callback) {
      tcp.once('drain', callback);
    },
  };
}

/**
 * A server-side WebSocket that sends a `next` frame built around a payload serialised once for a
 * whole group of subscribers. graphql-ws serialises every message itself: handed the placeholder in
 * place of the payload, it serialises only `{"id":…,"type":"next","payload":<placeholder>}`, and
 * `send` swaps that small text for the frame announced by `expect`. Anything else is sent as given.
 */
export class SharedFrameWebSocket extends WebSocket {
  /** Frames announced and not yet sent, by the placeholder message graphql-ws will send for them; made on first use, as most sockets idle. */
  private announced: Map<string, Buffer> | undefined;

  /** The next `send` of operation `id`'s placeholder `next` message sends this payload instead. */
  expect(id: string, payload: Buffer): void {
    (this.announced ??= new Map()).set(`{"id":${JSON.stringify(id)},"type":"next","payload":${PAYLOAD_PLACEHOLDER_JSON}}`, nextFrame(id, payload));
  }

  override send(data: Parameters<WebSocket['send']>[0], optionsOrCallback?: SendOptions | SendCallback, callback?: SendCallback): void {
    const options = typeof optionsOrCallback === 'function' ? {} : (optionsOrCallback ?? {});
    const done = typeof optionsOrCallback === 'function' ? optionsOrCallback : callback;
    const frame = typeof data === 'string' && this.announced?.size ? this.announced.get(data) : undefined;
    if (frame) {
      this.announced!.delete(data as string);
      // A text frame, as the string it stands for would have been.
      super.send(frame, { ...options, binary: false }, done);
      return;
    }
    super.send(data, options, done);
  }
}
