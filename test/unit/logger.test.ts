import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('../../lib/logger.ts', import.meta.url));

describe('the stdout logger', () => {
  it('writes a lone line out while the process keeps running, not only once 16 KiB follow it or at exit', async () => {
    // One warning, then the process idles: the line must reach the reader while it is still alive.
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)}; createLogger({ name: 'quiet', level: 'info' }).warn('a breaker opened'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`the process exited (${code}) before the line arrived`)));
      });
      expect(JSON.parse(line)).toMatchObject({ name: 'quiet', msg: 'a breaker opened', level: 40 });
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  }, 20_000);

  it('writes every line whole and in order, multi-byte text included, through to a process.exit right after', async () => {
    // Lines go to stdout as bytes: 3,000 of them cross several 16 KiB batches, the first 1,500 (as
    // the access log writes a turn's lines) encoded together, the last logged in the same turn as
    // the exit; 'é✓' is more bytes than characters.
    const script = [
      `import { createLogger, writeTogether } from ${JSON.stringify(LOGGER)};`,
      `const logger = createLogger({ name: 'busy', level: 'info' }).child({});`,
      `const line = (i) => logger.info({ i, text: 'é✓'.repeat(i % 7) }, 'line');`,
      `writeTogether(logger, () => { for (let i = 0; i < 1500; i++) line(i); });`,
      `for (let i = 1500; i < 3000; i++) line(i);`,
      `logger.warn('last'); process.exit(0);`,
    ].join(' ');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    expect(lines).toHaveLength(3001);
    const parsed = lines.map((line) => JSON.parse(line) as { i?: number; text?: string; msg: string });
    parsed.slice(0, 3000).forEach((line, index) => expect(line).toMatchObject({ i: index, text: 'é✓'.repeat(index % 7), msg: 'line' }));
    expect(parsed[3000]).toMatchObject({ msg: 'last', level: 40 });
  }, 20_000);

  it('holds at most MAX_BUFFERED_BYTES for a stdout nobody reads, then says how many lines it dropped once read again', async () => {
    // 40 MiB of lines while the pipe is not read: the buffer stops near its bound, and the process
    // reports what it holds on stderr. Then the pipe is read, and a warning counts the dropped lines.
    const script = [
      `import { createLogger, MAX_BUFFERED_BYTES } from ${JSON.stringify(LOGGER)};`,
      `const logger = createLogger({ name: 'stuck', level: 'info' });`,
      `const filler = 'x'.repeat(1000);`,
      `for (let i = 0; i < 40000; i++) logger.info({ i, filler }, 'line');`,
      `process.stderr.write(JSON.stringify({ held: process.memoryUsage().arrayBuffers, bound: MAX_BUFFERED_BYTES }) + '\\n');`,
      `setInterval(() => {}, 1000);`,
    ].join(' ');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      child.stdout.pause();
      const report = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`the process exited (${code}) before reporting`)));
      });
      const { held, bound } = JSON.parse(report) as { held: number; bound: number };
      expect(held).toBeLessThan(bound * 2);
      const notice = await new Promise<{ dropped: number; level: number }>((resolve) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const parsed = JSON.parse(line) as { msg: string; dropped: number; level: number };
          if (parsed.msg === 'log lines dropped: stdout was not read') resolve(parsed);
        });
        child.stdout.resume();
      });
      expect(notice.level).toBe(40);
      // Some 8,000 of the 40,000 fit under the bound; most of the rest were dropped.
      expect(notice.dropped).toBeGreaterThan(20_000);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});

describe('plain info lines', () => {
  it('are the lines pino itself writes for the same fields, but for the time', async () => {
    const { createLogger, plainInfoLines } = await import('../../lib/logger.ts');
    const written: string[] = [];
    const logger = createLogger({ name: 'gateway', destination: { write: (line: string) => void written.push(line) } }).child({ component: 'access' });
    const write = plainInfoLines(logger, 'operation');
    const entries = [
      { type: 'query', operation: 'Say "é✓"\n', documentHash: undefined, durationMs: 1.25, status: 200, errorCodes: [], path: 'pass-through', upstreamCalls: 1, caller: 'c:abc' },
      { type: 'unknown', durationMs: Number.NaN, status: 400, errorCodes: ['BAD_USER_INPUT', 'GRAPHQL_PARSE_FAILED'], path: 'apollo' },
      {},
    ];
    for (const fields of entries) {
      logger.info(fields, 'operation');
      write(fields);
    }
    expect(written).toHaveLength(6);
    const withoutTime = (line: string) => line.replace(/,"time":\d+,/, ',"time":0,');
    for (let n = 0; n < written.length; n += 2) expect(withoutTime(written[n + 1]!)).toBe(withoutTime(written[n]!));
    expect(JSON.parse(written[1]!)).toMatchObject({ level: 30, name: 'gateway', component: 'access', operation: 'Say "é✓"\n', msg: 'operation' });
  });
});
