import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { startTestStack } from '../../support/stack.ts';
import { stallingMultipart, stallingSse, stallingWs, type Stalling } from '../../support/stallingSubscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../../support/waitFor.ts';

/**
 * Issue 14, item 4's bound seen from the client: a subscriber that stops reading while events keep
 * coming is ended once `MAX_SUBSCRIBER_QUEUED_EVENTS` of them wait for it, with a documented code
 * and the way back (resubscribe `after` its last cursor), on every transport; the gateway's memory
 * for it is released at once. Driven by counts: events are given until the gateway has let the
 * subscriber go, each large enough that the sockets' buffers fill after a few dozen.
 */
const t = await startTestStack({ MAX_SUBSCRIBER_QUEUED_EVENTS: '3' });
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const QUERY = 'subscription { bonusCreated(filter: { hashtag: "slow" }) { cursor bonus { reason } } }';
/** Under the webhook's 64 KiB: each event is about 40 KB on the wire. */
const REASON = 'r'.repeat(40_000);
const stats = () => t.stack.gateway.subscriptions.stats();

const overWs = () => stallingWs(t.graphqlUrl, QUERY, member);
const overSse = () => stallingSse(t.graphqlUrl, QUERY, member);
const overMultipart = () => stallingMultipart(t.graphqlUrl, QUERY, member);

const giveBonus = () => emulator.control('bonuses', { giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: 'slow', reason: REASON });

const open: Stalling[] = [];
afterEach(async () => {
  for (const subscriber of open.splice(0)) subscriber.close();
  await waitUntil(() => stats().subscribers === 0 && stats().upstreams === 0, () => `every subscription closed (${JSON.stringify(stats())})`);
});

describe('a subscriber that falls MAX_SUBSCRIBER_QUEUED_EVENTS behind', () => {
  it.each([
    ['graphql-ws', overWs],
    ['SSE', overSse],
    ['multipart HTTP', overMultipart],
  ])('is ended with SUBSCRIBER_TOO_SLOW and told to resume from its cursor, over %s', async (_transport, subscribe) => {
    // Waiting for a slow reader must not add listeners to its response each time (the gateway runs in this process).
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const subscriber = subscribe();
    open.push(subscriber);
    // Live first: the subgraph streams to the gateway, and one event arrives.
    await waitForEventSubscriptions(subgraphUrl, 1);
    await giveBonus();
    await waitUntil(() => subscriber.results.length === 1, () => 'the first event');
    subscriber.stall();
    // Then events while it reads nothing, until the gateway lets it go: the socket's buffers, then its 3 queued events.
    let given = 0;
    while (stats().subscribers > 0) {
      expect(given).toBeLessThan(1000);
      await giveBonus();
      given += 1;
    }
    expect(stats()).toMatchObject({ subscribers: 0, upstreams: 0 });
    process.off('warning', onWarning);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    subscriber.resume();
    await waitUntil(() => subscriber.results.some((result) => result.errors), () => `the final error (${subscriber.results.length} results so far)`);
    const last = subscriber.results.at(-1)!;
    expect(last.errors).toEqual([
      {
        message: expect.stringMatching(/fell 3 events behind.*subscribe again with `after` set to the `cursor` of the last event received/),
        extensions: { code: 'SUBSCRIBER_TOO_SLOW' },
      },
    ]);
    // Everything queued before the end was delivered, each event whole.
    const events = subscriber.results.slice(0, -1);
    expect(events.length).toBeGreaterThan(3);
    for (const event of events) expect(event).toMatchObject({ data: { bonusCreated: { cursor: expect.any(String), bonus: { reason: REASON } } } });
  });
});
