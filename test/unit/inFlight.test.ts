import { afterEach, describe, expect, it, vi } from 'vitest';
import { createInFlight } from '../../gateway/inFlight.ts';
import { createWriteFence } from '../../gateway/writeFence.ts';
import { Departure } from '../../lib/http.ts';
import { countAbortControllers } from '../support/abortControllers.ts';

/** A call the test settles by hand, and the departure it was started with. */
function manualCall() {
  const started: Departure[] = [];
  let resolve!: (value: string) => void;
  const promise = new Promise<string>((done) => {
    resolve = done;
  });
  return { started, resolve, promise, start: (departure: Departure) => (started.push(departure), promise) };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('identical reads in flight', () => {
  it('starts one call for callers asking the same key, and each gets its answer', async () => {
    const inFlight = createInFlight<string>();
    const call = manualCall();
    const first = inFlight.run('k', new Departure(), call.start);
    const second = inFlight.run('k', new Departure(), call.start);
    expect([first.shared, second.shared]).toEqual([false, true]);
    expect(call.started).toHaveLength(1);
    call.resolve('answer');
    await expect(Promise.all([first.promise, second.promise])).resolves.toEqual(['answer', 'answer']);
    // Settled, the key is free: the next caller starts a call of its own.
    await Promise.resolve();
    expect(inFlight.size).toBe(0);
  });

  it('ends one caller’s wait when it leaves, and cuts the shared call off only when the last has left', async () => {
    const inFlight = createInFlight<string>();
    const call = manualCall();
    const leaving = new Departure();
    const staying = new Departure();
    const first = inFlight.run('k', leaving, call.start);
    const second = inFlight.run('k', staying, call.start);
    const gone = new DOMException('the client went away', 'AbortError');
    leaving.leave(gone);
    await expect(first.promise).rejects.toBe(gone);
    expect(call.started[0]!.aborted).toBe(false);

    staying.leave(new DOMException('the other went away too', 'AbortError'));
    await expect(second.promise).rejects.toThrow('the other went away too');
    expect(call.started[0]!.aborted).toBe(true);
    expect((call.started[0]!.reason as Error).message).toBe('the other went away too');
  });

  it('refuses at once a caller already gone, and cuts off a call nobody else waits on', async () => {
    const inFlight = createInFlight<string>();
    const call = manualCall();
    const controller = new AbortController();
    controller.abort(new Error('gone before asking'));
    const { promise } = inFlight.run('k', controller.signal, call.start);
    await expect(promise).rejects.toThrow('gone before asking');
    expect(call.started[0]!.aborted).toBe(true);
  });

  it('follows an AbortSignal as it follows a departure, and stops listening once answered', async () => {
    const inFlight = createInFlight<string>();
    const call = manualCall();
    const controller = new AbortController();
    const { promise } = inFlight.run('k', controller.signal, call.start);
    call.resolve('answer');
    await expect(promise).resolves.toBe('answer');
    // Aborted after its answer: nothing is told, the call is not cut off.
    controller.abort(new Error('late'));
    expect(call.started[0]!.aborted).toBe(false);
  });

  it('makes no AbortController for callers that come with a departure', async () => {
    const made = countAbortControllers();
    const inFlight = createInFlight<string>();
    const call = manualCall();
    const answers = [inFlight.run('k', new Departure(), call.start).promise, inFlight.run('k', new Departure(), call.start).promise];
    call.resolve('answer');
    await Promise.all(answers);
    expect(made()).toBe(0);
  });

  it('lets no caller join a call that a mutation by its credential overtook, yet answers those already waiting', async () => {
    const fence = createWriteFence();
    const inFlight = createInFlight<string>(fence);
    const before = manualCall();
    const first = inFlight.run('k', new Departure(), before.start, 'member');
    const other = inFlight.run('k2', new Departure(), before.start, 'admin');
    fence.overtake('member');
    const after = manualCall();
    const second = inFlight.run('k', new Departure(), after.start, 'member');
    // Another credential's calls are still joined.
    const third = inFlight.run('k2', new Departure(), after.start, 'admin');
    expect([first.shared, second.shared, other.shared, third.shared]).toEqual([false, false, false, true]);
    expect([before.started, after.started].map((started) => started.length)).toEqual([2, 1]);
    // Both answers under the same key: the overtaken call settling does not forget the newer one.
    before.resolve('before the write');
    await expect(first.promise).resolves.toBe('before the write');
    expect(inFlight.run('k', new Departure(), after.start, 'member').shared).toBe(true);
    after.resolve('after the write');
    await expect(second.promise).resolves.toBe('after the write');
    await Promise.resolve();
    expect([inFlight.size, fence.running]).toEqual([0, 0]);
  });

  it('tells the call it starts, once answered, whether a mutation by its credential overtook it', async () => {
    const fence = createWriteFence();
    const inFlight = createInFlight<string>(fence);
    const seen: boolean[] = [];
    const call = manualCall();
    const start = (departure: Departure, read: { readonly overtaken: boolean }) => call.start(departure).then((value) => (seen.push(read.overtaken), value));
    const overtaken = inFlight.run('k', undefined, start, 'member').promise;
    fence.overtake('member');
    const fresh = inFlight.run('k', undefined, start, 'member').promise;
    // A credential with no read running: nothing to mark, nothing kept for it.
    fence.overtake('nobody');
    call.resolve('answer');
    await Promise.all([overtaken, fresh]);
    expect(seen).toEqual([true, false]);
  });
});
