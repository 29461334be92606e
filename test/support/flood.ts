import type { ServerResponse } from 'node:http';

/**
 * Writes an answer's body as fast as the other side reads it, up to `maxBytes`, telling `onSent`
 * each chunk it wrote: the test then knows how much its reader let through before it let go.
 */
export function flood(res: ServerResponse, onSent: (bytes: number) => void, { chunkBytes = 16 * 1024, maxBytes = 64 * 1024 * 1024 } = {}): void {
  const chunk = Buffer.alloc(chunkBytes, 0x20);
  let written = 0;
  const pump = () => {
    while (!res.destroyed && written < maxBytes) {
      written += chunk.length;
      onSent(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}
