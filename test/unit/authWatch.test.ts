import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FormattedExecutionResult } from 'graphql';
import { AuthFailure, type Authenticated } from '../../gateway/auth/authenticate.ts';
import type { Principal } from '../../gateway/auth/principal.ts';
import { createAuthWatch } from '../../gateway/subscriptions/authWatch.ts';
import { createPushIterator } from '../../gateway/subscriptions/pushIterator.ts';

/**
 * The re-checks of live subscriptions (QA7 defect 1) without a network: an authenticator whose
 * answer the test sets, counted, and fake timers. What the end-to-end test cannot afford: the
 * credentials held in Redis change (their cache period is 30 s).
 */
const principal: Principal = { id: 'partner', scopes: new Set(['recognition:read']), via: 'jwt', expiresAt: undefined };
const token = { authorization: 'Bearer abc' };

function authenticatorWith(answer: () => Promise<Authenticated>) {
  const calls = { count: 0 };
  return {
    calls,
    authenticator: {
      authenticate: async () => {
        calls.count += 1;
        return answer();
      },
      acceptedUntil: (p: Principal) => (p.expiresAt === undefined ? undefined : p.expiresAt * 1000),
      recheckMs: () => 30_000,
    },
  };
}

/** A subscription's stream, and how it ended. */
function stream() {
  const iterator = createPushIterator<FormattedExecutionResult>();
  const outcome = iterator.next().then(
    () => undefined,
    (error: Error & { extensions?: { code?: string } }) => ({ message: error.message, code: error.extensions?.code }),
  );
  return { iterator, outcome };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('the watch over live subscriptions', () => {
  it('ends the subscriptions that used a held credential once it is withdrawn, and not those that brought their own', async () => {
    let held: Record<string, string> = { 'x-recognition-token': 'held' };
    const { authenticator } = authenticatorWith(async () => ({ principal, headers: { ...held, ...token } }));
    const watch = createAuthWatch(authenticator);
    const usingHeld = stream();
    const ownCredential = stream();
    watch.add({ principal, headers: { 'x-recognition-token': 'held', ...token } }, token, undefined, usingHeld.iterator);
    watch.add({ principal, headers: { 'x-recognition-token': 'own', ...token } }, { ...token, 'x-recognition-token': 'own' }, undefined, ownCredential.iterator);
    held = {};
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await usingHeld.outcome).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/credentials .* withdrawn/) });
    ownCredential.iterator.push({ data: { still: true } });
    expect(await ownCredential.outcome).toBeUndefined();
    await ownCredential.iterator.return!();
    expect(watch.size()).toBe(0);
  });

  it('asks once per period for every subscription of one token, ends none on a 503, and all on a 401', async () => {
    let failure: AuthFailure | undefined;
    const { authenticator, calls } = authenticatorWith(async () => {
      if (failure) throw failure;
      return { principal, headers: token };
    });
    const watch = createAuthWatch(authenticator);
    const streams = Array.from({ length: 1000 }, () => stream());
    for (const { iterator } of streams) watch.add({ principal, headers: token }, token, undefined, iterator);
    expect(watch.size()).toBe(1);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(calls.count).toBe(1);
    failure = new AuthFailure('away', 503, 'Bearer');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.count).toBe(3);
    streams[0]!.iterator.push({ data: { live: true } });
    expect(await streams[0]!.outcome).toBeUndefined();
    failure = new AuthFailure('revoked', 401, 'Bearer');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(calls.count).toBe(4);
    for (const { outcome } of streams.slice(1)) expect(await outcome).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/no longer valid/) });
    expect(watch.size()).toBe(0);
  });

  it('ends at the token\'s expiry with no re-check at all, and a token valid for months arms no timer that fires early', async () => {
    const { authenticator, calls } = authenticatorWith(async () => ({ principal, headers: token }));
    const watch = createAuthWatch({ ...authenticator, recheckMs: () => undefined });
    const soon = stream();
    const later = stream();
    const expiresSoon = { ...principal, expiresAt: Date.now() / 1000 + 60 };
    watch.add({ principal: expiresSoon, headers: token }, token, undefined, soon.iterator);
    watch.add({ principal: { ...principal, expiresAt: Date.now() / 1000 + 90 * 86_400 }, headers: token }, { authorization: 'Bearer other' }, undefined, later.iterator);
    await vi.advanceTimersByTimeAsync(59_000);
    soon.iterator.push({ data: {} });
    expect(await soon.outcome).toBeUndefined();
    const next = expect(soon.iterator.next()).rejects.toMatchObject({ message: expect.stringMatching(/has expired: subscribe again with a fresh token/), extensions: { code: 'UNAUTHENTICATED' } });
    await vi.advanceTimersByTimeAsync(1_000);
    await next;
    await vi.advanceTimersByTimeAsync(30 * 86_400_000);
    expect(watch.size()).toBe(1);
    await vi.advanceTimersByTimeAsync(61 * 86_400_000);
    expect(await later.outcome).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(calls.count).toBe(0);
  });
});
