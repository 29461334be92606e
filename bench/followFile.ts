import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

export interface FileFollower {
  /** Reads what was written since the last read, now, and hands it on. */
  drain(): Promise<void>;
  /** Stops polling after one last drain, and closes the file. */
  stop(): Promise<void>;
}

/**
 * Hands on, as text, what is appended to a file that another process writes, reading it every
 * `everyMs`. Reads never overlap and never split a UTF-8 character between two calls.
 */
export function followFile(path: string, onText: (text: string) => void, everyMs = 20): FileFollower {
  const decoder = new StringDecoder('utf8');
  const chunk = Buffer.alloc(64 * 1024);
  let handle: Promise<FileHandle> | undefined;
  let offset = 0;
  let reading: Promise<void> = Promise.resolve();
  let closed = false;

  const readAll = async () => {
    if (closed) return;
    const file = await (handle ??= open(path, 'r'));
    for (;;) {
      const { bytesRead } = await file.read(chunk, 0, chunk.length, offset);
      if (bytesRead === 0) return;
      offset += bytesRead;
      const text = decoder.write(chunk.subarray(0, bytesRead));
      if (text) onText(text);
    }
  };
  const drain = () => (reading = reading.then(readAll));
  const timer = setInterval(() => void drain().catch(() => {}), everyMs).unref();

  return {
    drain,
    async stop() {
      clearInterval(timer);
      await drain().catch(() => {});
      closed = true;
      await (await handle?.catch(() => undefined))?.close();
    },
  };
}
