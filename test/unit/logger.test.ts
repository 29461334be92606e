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
});
