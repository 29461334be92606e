import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { createCredentialChecks } from '../../subgraphs/kit/credentialChecks.ts';
import { failedReadOf, followLog } from '../../subgraphs/kit/events/follow.ts';
import { createMemoryLog } from '../../subgraphs/kit/events/memoryLog.ts';
import { createManualClock } from '../support/manualClock.ts';

const refusal = (code: string) => new GraphQLError(`refused: ${code}`, { extensions: { code } });
/** Lets the promise callbacks a tick started run to their end. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A stand-in for the service: counts the checks of each credential and answers as the test says. */
function service() {
  const calls = new Map<string, number>();
  const answers = new Map<string, () => Promise<void>>();
  return {
    verify: (credential: string) => () => {
      calls.set(credential, (calls.get(credential) ?? 0) + 1);
      return (answers.get(credential) ?? (() => Promise.resolve()))();
    },
    answer(credential: string, answer: () => Promise<void>) {
      answers.set(credential, answer);
    },
    calls: (credential: string) => calls.get(credential) ?? 0,
  };
}

describe('watching the credential of open subscriptions', () => {
  it('checks each credential once per TTL however many subscriptions hold it', async () => {
    const clock = createManualClock();
    const checks = createCredentialChecks({ ttlMs: 1000, clock });
    const upstream = service();
    const refused: string[] = [];
    for (let index = 0; index < 10_000; index += 1) checks.watch('busy', upstream.verify('busy'), () => refused.push('busy'));
    for (let index = 0; index < 3; index += 1) checks.watch('quiet', upstream.verify('quiet'), () => refused.push('quiet'));
    expect(checks.watched()).toBe(2);
    for (let second = 1; second <= 5; second += 1) {
      clock.advance(1000);
      await settle();
      expect([upstream.calls('busy'), upstream.calls('quiet')]).toEqual([second, second]);
    }
    expect(refused).toEqual([]);
  });

  it('counts a check made when subscribing: the next falls a TTL after it, not sooner', async () => {
    const clock = createManualClock();
    const checks = createCredentialChecks({ ttlMs: 1000, clock });
    const upstream = service();
    clock.advance(400);
    await checks.check('token', upstream.verify('token'));
    checks.watch('token', upstream.verify('token'), () => {});
    expect(clock.nextDueIn()).toBe(1000);
    // Subscribing again within the TTL asks nothing, and moves nothing.
    await checks.check('token', upstream.verify('token'));
    checks.watch('token', upstream.verify('token'), () => {});
    clock.advance(999);
    await settle();
    expect(upstream.calls('token')).toBe(1);
    clock.advance(1);
    await settle();
    expect(upstream.calls('token')).toBe(2);
  });

  it('ends every subscription of a refused credential with the refusal, once, and no other credential’s', async () => {
    for (const code of ['UNAUTHENTICATED', 'FORBIDDEN']) {
      const clock = createManualClock();
      const checks = createCredentialChecks({ ttlMs: 1000, clock });
      const upstream = service();
      const ended: [string, unknown][] = [];
      for (const credential of ['revoked', 'revoked', 'revoked', 'kept']) checks.watch(credential, upstream.verify(credential), (error) => ended.push([credential, error.extensions.code]));
      const error = refusal(code);
      upstream.answer('revoked', () => Promise.reject(error));
      clock.advance(1000);
      await settle();
      expect(ended).toEqual([
        ['revoked', code],
        ['revoked', code],
        ['revoked', code],
      ]);
      expect(checks.watched()).toBe(1);
      // The verdict is remembered: subscribing again is refused without asking.
      await expect(checks.check('revoked', upstream.verify('revoked'))).rejects.toBe(error);
      expect(upstream.calls('revoked')).toBe(1);
      for (let second = 0; second < 5; second += 1) {
        clock.advance(1000);
        await settle();
      }
      expect(ended).toHaveLength(3);
      expect(upstream.calls('kept')).toBe(6);
      expect(upstream.calls('revoked')).toBe(1);
    }
  });

  it('keeps streaming through passing failures, trying again a TTL later', async () => {
    const clock = createManualClock();
    const checks = createCredentialChecks({ ttlMs: 1000, clock });
    const upstream = service();
    const ended: unknown[] = [];
    checks.watch('token', upstream.verify('token'), (error) => ended.push(error));
    for (const code of ['UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE', 'RATE_LIMITED']) {
      upstream.answer('token', () => Promise.reject(refusal(code)));
      clock.advance(1000);
      await settle();
    }
    upstream.answer('token', () => Promise.reject(new Error('not even a GraphQL error')));
    clock.advance(1000);
    await settle();
    expect(upstream.calls('token')).toBe(4);
    expect(ended).toEqual([]);
    expect(clock.nextDueIn()).toBe(1000);
    upstream.answer('token', () => Promise.reject(refusal('UNAUTHENTICATED')));
    clock.advance(1000);
    await settle();
    expect(ended).toHaveLength(1);
  });

  it('stops checking when the last subscription of a credential leaves', async () => {
    const clock = createManualClock();
    const checks = createCredentialChecks({ ttlMs: 1000, clock });
    const upstream = service();
    const stops = [0, 1, 2].map(() => checks.watch('token', upstream.verify('token'), () => {}));
    stops[0]!();
    stops[0]!();
    stops[1]!();
    clock.advance(1000);
    await settle();
    expect(upstream.calls('token')).toBe(1);
    stops[2]!();
    expect(checks.watched()).toBe(0);
    expect(clock.pending()).toBe(0);
    for (let second = 0; second < 10; second += 1) {
      clock.advance(1000);
      await settle();
    }
    expect(upstream.calls('token')).toBe(1);
    // Nothing to watch without a credential.
    checks.watch(undefined, upstream.verify('none'), () => {})();
    expect(clock.pending()).toBe(0);
  });

  it('still checks open subscriptions when answers are not remembered (TTL 0), every 30 s', async () => {
    const clock = createManualClock();
    const checks = createCredentialChecks({ ttlMs: 0, clock });
    const upstream = service();
    checks.watch('token', upstream.verify('token'), () => {});
    checks.watch('token', upstream.verify('token'), () => {});
    expect(clock.nextDueIn()).toBe(30_000);
    for (let turn = 0; turn < 3; turn += 1) {
      clock.advance(30_000);
      await settle();
    }
    expect(upstream.calls('token')).toBe(3);
  });
});

describe('a followed log ended by its watch', () => {
  it('yields the refusal as its last result, before events still queued, and lets the watch go', async () => {
    const log = createMemoryLog({ capacity: 100 });
    let end: ((error: Error) => void) | undefined;
    let unwatched = 0;
    const followed = await followLog(log, undefined, () => true, {
      watch: (ending) => {
        end = ending;
        return () => (unwatched += 1);
      },
    });
    await log.append({ dedupeKey: 'a', type: 't', occurredAt: '2026-01-01T00:00:00.000Z', payload: { n: 1 } });
    const first = await followed.next();
    expect(first.value?.dedupeKey).toBe('a');
    await log.append({ dedupeKey: 'b', type: 't', occurredAt: '2026-01-01T00:00:00.000Z', payload: { n: 2 } });
    const error = refusal('UNAUTHENTICATED');
    end!(error);
    end!(refusal('FORBIDDEN'));
    const last = await followed.next();
    expect(failedReadOf(last.value!)).toBe(error);
    expect(await followed.next()).toEqual({ value: undefined, done: true });
    expect(unwatched).toBe(1);
    expect(log.listeners()).toBe(0);
  });

  it('lets the watch go when the subscriber leaves first', async () => {
    const log = createMemoryLog({ capacity: 100 });
    let unwatched = 0;
    const followed = await followLog(log, undefined, () => true, { watch: () => () => (unwatched += 1) });
    await followed.return?.();
    await followed.return?.();
    expect(unwatched).toBe(1);
  });
});
