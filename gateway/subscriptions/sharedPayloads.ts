/**
 * Each event serialised once per group of identical subscriptions, not once per subscriber.
 *
 * The executor hands every subscriber of a group the very same result object (gateway/subscriptions/
 * executor.ts, `broadcast`), so the JSON of a result is remembered by the object itself: the first
 * subscriber's transport serialises it, the others reuse the bytes. The transports then build each
 * subscriber's frame around those bytes (graphql-ws adds the subscriber's own operation id), while
 * each subscriber keeps its own bounded queue. Remembered weakly: the bytes go with the event.
 */
export interface SharedPayloads {
  /** The UTF-8 JSON of a result: serialised on first use, the same Buffer for every later one. */
  bytesOf(result: object): Buffer;
  /** Results serialised since start: one per event per group of identical subscribers. */
  readonly serializations: number;
  /** Counts a frame written straight to a subscriber's socket around these bytes (graphql-ws's loop bypassed). */
  frameWritten(): void;
  readonly framesWritten: number;
}

export interface SharedPayloadsOptions {
  /** @default JSON.stringify, as graphql-ws and graphql-sse serialise a payload */
  serialize?: (value: object) => string;
}

export function createSharedPayloads({ serialize = JSON.stringify }: SharedPayloadsOptions = {}): SharedPayloads {
  const serialized = new WeakMap<object, Buffer>();
  let serializations = 0;
  let framesWritten = 0;
  return {
    bytesOf(result) {
      let bytes = serialized.get(result);
      if (!bytes) {
        bytes = Buffer.from(serialize(result));
        serializations += 1;
        serialized.set(result, bytes);
      }
      return bytes;
    },
    get serializations() {
      return serializations;
    },
    frameWritten() {
      framesWritten += 1;
    },
    get framesWritten() {
      return framesWritten;
    },
  };
}

/**
 * What a transport hands its library (graphql-ws, graphql-sse) in place of a payload it will frame
 * itself: an object, as their message checks want, that serialises to a string no real payload is
 * (a payload is always an object), so the frame carrying it is known for what it is.
 */
export const PAYLOAD_PLACEHOLDER: { toJSON(): string } = Object.freeze({ toJSON: () => '\u0000shared payload' });
export const PAYLOAD_PLACEHOLDER_JSON = JSON.stringify(PAYLOAD_PLACEHOLDER);
