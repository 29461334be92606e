import { once } from 'node:events';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnMain } from '../support/mainProcess.ts';

// A port another program holds is the operator's setting to change: one line that says so, as for a
// bad value, never a stack.
const holder = net.createServer();
await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
const taken = (holder.address() as net.AddressInfo).port;
afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

describe('a main whose port is taken', () => {
  it('exits 1 with one configuration line naming the address', { timeout: 30_000 }, async () => {
    const { child, output } = spawnMain(['--import', 'tsx', 'emulators/recognition/main.ts'], { ...process.env, RECOGNITION_EMULATOR_PORT: String(taken) });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(output().trim()).toBe(`Configuration error: cannot listen on 127.0.0.1:${taken} (the port is in use); choose another port or HOST in the settings.`);
  });
});
