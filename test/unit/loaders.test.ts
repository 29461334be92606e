import { describe, expect, it } from 'vitest';
import { createLimiter, createPerKeyLoader } from '../../subgraphs/kit/loaders.ts';

/** A call the test answers when it chooses. */
function controlledCalls<K>() {
  const pending = new Map<K, { resolve(value: string): void; reject(error: unknown): void }>();
  const calls: K[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetchOne = (key: K) =>
    new Promise<string>((resolve, reject) => {
      calls.push(key);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const settle = () => (inFlight -= 1);
      pending.set(key, {
        resolve: (value) => (settle(), resolve(value)),
        reject: (error) => (settle(), reject(error)),
      });
    });
  return { fetchOne, calls, pending, maxInFlight: () => maxInFlight };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createPerKeyLoader', () => {
  it('calls each distinct key once, however many times a request loads it', async () => {
    const upstream = controlledCalls<string>();
    const loader = createPerKeyLoader(upstream.fetchOne);
    const loads = [loader.load('a'), loader.load('b'), loader.load('a')];
    await tick();
    expect(upstream.calls).toEqual(['a', 'b']);
    upstream.pending.get('a')!.resolve('A');
    upstream.pending.get('b')!.resolve('B');
    expect(await Promise.all(loads)).toEqual(['A', 'B', 'A']);
    expect(await loader.load('a')).toBe('A');
    expect(upstream.calls).toEqual(['a', 'b']);
  });

  it('settles each key on its own: a fast key does not wait for a slow one', async () => {
    const upstream = controlledCalls<string>();
    const loader = createPerKeyLoader(upstream.fetchOne);
    const slow = loader.load('slow');
    const fast = loader.load('fast');
    await tick();
    upstream.pending.get('fast')!.resolve('FAST');
    expect(await fast).toBe('FAST');
    let slowSettled = false;
    void slow.then(() => (slowSettled = true));
    await tick();
    expect(slowSettled).toBe(false);
    upstream.pending.get('slow')!.resolve('SLOW');
    expect(await slow).toBe('SLOW');
  });

  it('runs at most `concurrency` calls at once, and every call in the end', async () => {
    const upstream = controlledCalls<number>();
    const loader = createPerKeyLoader(upstream.fetchOne, { concurrency: 3 });
    const loads = Array.from({ length: 10 }, (_, key) => loader.load(key));
    for (let round = 0; round < 10; round += 1) {
      await tick();
      for (const [key, call] of upstream.pending) {
        upstream.pending.delete(key);
        call.resolve(`v${key}`);
      }
    }
    expect(await Promise.all(loads)).toEqual(Array.from({ length: 10 }, (_, key) => `v${key}`));
    expect(upstream.maxInFlight()).toBe(3);
    expect(upstream.calls).toEqual(Array.from({ length: 10 }, (_, key) => key));
  });

  it('rejects only the failing key’s load', async () => {
    const loader = createPerKeyLoader(async (key: string) => {
      if (key === 'bad') throw new Error('upstream said no');
      if (key === 'odd') throw 'not an Error';
      return key.toUpperCase();
    });
    const [good, bad, odd] = await Promise.allSettled([loader.load('good'), loader.load('bad'), loader.load('odd')]);
    expect(good).toEqual({ status: 'fulfilled', value: 'GOOD' });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'upstream said no' } });
    expect(odd).toMatchObject({ status: 'rejected', reason: { message: 'not an Error' } });
  });
});

describe('createLimiter', () => {
  it('runs queued tasks in the order they came', async () => {
    const limit = createLimiter(1);
    const order: string[] = [];
    let release!: () => void;
    const first = limit(() => new Promise<void>((resolve) => (release = resolve)).then(() => void order.push('first')));
    const second = limit(async () => void order.push('second'));
    await tick();
    release();
    const third = limit(async () => void order.push('third'));
    await Promise.all([first, second, third]);
    expect(order).toEqual(['first', 'second', 'third']);
  });

  it('frees the slot when a task fails', async () => {
    const limit = createLimiter(1);
    await expect(limit(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limit(async () => 'next')).toBe('next');
  });

  it('fails the tasks still waiting once cancelled, without running them, and lets the running one finish', async () => {
    const cancellation = { aborted: false };
    const limit = createLimiter(1, cancellation, () => new Error('the request was cancelled'));
    let release!: () => void;
    const ran: string[] = [];
    const running = limit(() => new Promise<string>((resolve) => (release = () => resolve('first'))).finally(() => void ran.push('first')));
    const queued = limit(async () => void ran.push('queued'));
    cancellation.aborted = true;
    release();
    expect(await running).toBe('first');
    await expect(queued).rejects.toThrow('the request was cancelled');
    expect(ran).toEqual(['first']);
    // The slot went back: a task after the cancellation is refused too, and nothing hangs.
    await expect(limit(async () => 'late')).rejects.toThrow('the request was cancelled');
  });
});

