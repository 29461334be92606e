import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { waitUntil } from './waitFor.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A real, throwaway redis-server for one test file. Never skipped: CI installs redis-server, and
 * a machine without it fails here with the fix in the message.
 */
export async function startRedis(): Promise<{ url: string; close(): Promise<void> }> {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('redis-server is not installed: run `apt-get install -y redis-server` (.ci/run does)');
  }
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // Refused connections are expected until the server is up.
  probe.on('error', () => undefined);
  await waitUntil(
    async () => {
      try {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        probe.disconnect();
        return false;
      }
    },
    () => `redis-server on ${port}`,
  );
  probe.disconnect();
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
