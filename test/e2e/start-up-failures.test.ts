import { once } from 'node:events';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnMain } from '../support/mainProcess.ts';

// What stops a main at start is said in one line, as a bad value is, never a stack: a port another
// program holds, a store that does not answer.
// It also stands for a Redis that accepts connections and never answers.
const accepted = new Set<net.Socket>();
const holder = net.createServer((socket) => accepted.add(socket));
await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
const taken = (holder.address() as net.AddressInfo).port;
afterAll(async () => {
  for (const socket of accepted) socket.destroy();
  await new Promise<void>((resolve) => holder.close(() => resolve()));
});

describe('a main', () => {
  it('whose port is taken exits 1 with one configuration line naming the address', { timeout: 30_000 }, async () => {
    const { child, output } = spawnMain(['--import', 'tsx', 'emulators/recognition/main.ts'], { ...process.env, RECOGNITION_EMULATOR_PORT: String(taken) });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(output().trim()).toBe(`Configuration error: cannot listen on 127.0.0.1:${taken} (the port is in use); choose another port or HOST in the settings.`);
  });

  it('whose Redis does not answer exits 1 with one line saying so', { timeout: 30_000 }, async () => {
    const { child, output } = spawnMain(['--import', 'tsx', 'subgraphs/recognition/main.ts'], { ...process.env, REDIS_URL: `redis://127.0.0.1:${taken}`, RECOGNITION_SUBGRAPH_PORT: '0', RECOGNITION_EMULATOR_PORT: '0', LOG_LEVEL: 'silent' });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(output().trim()).toBe('Start-up failed: the event log is kept in Redis, which did not answer; try again shortly (UPSTREAM_UNAVAILABLE)');
  });
});
