// Preloaded by `npm run soak` (with --expose-gc) into every process it launches. On SIGUSR2 the
// process collects all its garbage and appends its memory figures to a file the soak reads: the
// heap still used after a full collection is live data, which RSS is not (with 64 MiB semi-spaces
// the young generation alone moves RSS by tens of MiB, and V8 gives pages back when it chooses).
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';

/** What one reading appends, one JSON line per reading, in `<pid>.jsonl`. */
export interface HeapReading {
  at: number;
  rss: number;
  /** JavaScript heap in use after the collection: live data. */
  heapUsed: number;
  /** Memory outside the heap that JavaScript objects still hold after the collection (Buffers among it). */
  external: number;
  /** JavaScript heap V8 holds from the system (all spaces), used or not. */
  heapCommitted: number;
  /** Of it, the young generation (semi-spaces), which V8 grows under allocation up to `--max-semi-space-size`. */
  youngCommitted: number;
}

const directory = process.env.SOAK_HEAP_PROBE_DIR;
const collect = (globalThis as { gc?: () => void }).gc;
if (directory && collect) {
  process.on('SIGUSR2', () => {
    collect();
    const memory = process.memoryUsage();
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    const reading: HeapReading = { at: Date.now(), rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external, heapCommitted: memory.heapTotal, youngCommitted: young?.space_size ?? 0 };
    appendFileSync(join(directory, `${process.pid}.jsonl`), `${JSON.stringify(reading)}\n`);
  });
}
