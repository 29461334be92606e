import { describe, expect, it } from 'vitest';
import { graphError } from '../../subgraphs/kit/errors.ts';
import { ErrorCode } from '../../lib/errors.ts';
import type { ImportDto } from '../../subgraphs/imports/client.ts';
import { createStatusPoller } from '../../subgraphs/imports/poller.ts';
import { createManualClock } from '../support/manualClock.ts';

const status = (statusText: string): ImportDto => ({ id: 'imp_1', type: 'swagger', statusText, message: null });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the imports status poller', () => {
  it('polls with each watching key in turn, so a key revoked after subscribing ends its own subscribers and no one else’s', async () => {
    const clock = createManualClock();
    const revoked = new Set<string>();
    const asked: string[] = [];
    const poller = createStatusPoller({
      clock,
      backoff: { initialMs: 1000, maxMs: 1000 },
      fetchStatus: async (_id, credential) => {
        asked.push(credential);
        if (revoked.has(credential)) throw graphError('imports: the API key was refused', { code: ErrorCode.Unauthenticated, service: 'imports', status: 401 });
        return status('In progress');
      },
    });
    const first = poller.follow('imp_1', 'key-a', status('In progress'));
    const second = poller.follow('imp_1', 'key-b', status('In progress'));
    await first.next();
    await second.next();
    revoked.add('key-b');
    for (let tick = 0; tick < 2; tick += 1) {
      clock.advance(1000);
      await settle();
    }
    expect(asked).toEqual(['key-a', 'key-b']);
    expect(await second.next()).toMatchObject({ done: false, value: { extensions: { code: 'UNAUTHENTICATED' } } });
    expect(await second.next()).toMatchObject({ done: true });
    expect(poller.stats()).toMatchObject({ watches: 1, subscribers: 1 });
    clock.advance(1000);
    await settle();
    expect(asked).toEqual(['key-a', 'key-b', 'key-a']);
    await poller.close();
  });
});
