import { WebSocket } from 'ws';
import { PAYLOAD_PLACEHOLDER_JSON } from './sharedPayloads.ts';

type SendOptions = { mask?: boolean; binary?: boolean; compress?: boolean; fin?: boolean };
type SendCallback = (error?: Error) => void;

const NEXT_TAIL = Buffer.from('}');

/** graphql-ws's `next` message for `id` around a payload already serialised, byte for byte as it would write it. */
export function nextFrame(id: string, payload: Buffer): Buffer {
  const head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  return Buffer.concat([Buffer.from(head), payload, NEXT_TAIL]);
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
