import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { stallingMultipart, stallingSse, stallingWs, type Stalling } from '../../support/stallingSubscribers.ts';
import { subscribeWs, type Collected } from '../../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../../support/waitFor.ts';

/**
 * A stalled subscriber's queue bounded in bytes, not only in events: with events of up to 64 KiB,
 * 10,000 of them held 640 MB for one reader that stopped. Here the byte bound is 64 KiB and the
 * count bound its default (10,000): the stalled subscriber is ended with SUBSCRIBER_TOO_SLOW
 * saying it fell that many bytes behind, once its socket's buffers are full and two events wait,
 * while a subscriber of the same stream that reads gets every event. With each event serialised
 * once for its group (shared payloads) and without (each measured once when it has to wait).
 */
const BOUND = 64 * 1024;
const stacks: [string, TestStack][] = [
  ['shared payloads', await startTestStack({ MAX_SUBSCRIBER_QUEUED_BYTES: String(BOUND) })],
  ['payloads serialised per subscriber', await startTestStack({ MAX_SUBSCRIBER_QUEUED_BYTES: String(BOUND), GATEWAY_SHARED_PAYLOADS: 'off' })],
];
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const QUERY = 'subscription { bonusCreated(filter: { hashtag: "heavy" }) { cursor bonus { reason } } }';
/** Under the webhook's 64 KiB: each event is about 48 KB, so two of them pass the bound. */
const REASON = 'r'.repeat(48_000);

const open: { close(): void }[] = [];
afterEach(async () => {
  for (const subscriber of open.splice(0)) subscriber.close();
  for (const [, t] of stacks) {
    const stats = () => t.stack.gateway.subscriptions.stats();
    await waitUntil(() => stats().subscribers === 0 && stats().upstreams === 0, () => `every subscription closed (${JSON.stringify(stats())})`);
  }
});

describe.each(stacks)('a subscriber that falls MAX_SUBSCRIBER_QUEUED_BYTES behind, with %s', (_mode, t) => {
  const subgraphUrl = t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
  const stats = () => t.stack.gateway.subscriptions.stats();
  const giveBonus = () => t.emulator('recognition').control('bonuses', { giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: 'heavy', reason: REASON });

  it.each([
    ['graphql-ws', stallingWs],
    ['SSE', stallingSse],
    ['multipart HTTP', stallingMultipart],
  ])('is ended with SUBSCRIBER_TOO_SLOW far below the event count, over %s, while a reader of the same stream gets every event', async (_transport, subscribe) => {
    const reader: Collected = subscribeWs(t.graphqlUrl, QUERY, { connectionParams: member });
    const stalled: Stalling = subscribe(t.graphqlUrl, QUERY, member);
    open.push(reader, stalled);
    // Both on the one upstream stream before the first event.
    await waitUntil(() => stats().subscribers === 2, () => `both subscribers (${JSON.stringify(stats())})`);
    await waitForEventSubscriptions(subgraphUrl, 1);
    await giveBonus();
    await waitUntil(() => stalled.results.length === 1 && reader.results.length === 1, () => 'the first event to both');
    stalled.stall();
    let given = 1;
    while (stats().subscribers > 1) {
      // The sockets' buffers hold a few dozen such events; the count bound would take 10,000 more.
      expect(given).toBeLessThan(500);
      await giveBonus();
      given += 1;
    }
    expect(stats()).toMatchObject({ subscribers: 1, upstreams: 1 });
    // The reader was never held up: every event, whole, in order of the cursors.
    const received = await reader.waitFor(given);
    for (const result of received) expect(result).toMatchObject({ data: { bonusCreated: { cursor: expect.any(String), bonus: { reason: REASON } } } });
    stalled.resume();
    await waitUntil(() => stalled.results.some((result) => result.errors), () => `the final error (${stalled.results.length} results so far)`);
    const last = stalled.results.at(-1)!;
    expect(last.errors).toEqual([
      {
        message: expect.stringMatching(new RegExp(`^this subscriber fell more than ${BOUND} bytes of events behind and was disconnected; subscribe again with \`after\` set to the \`cursor\` of the last event received`)),
        extensions: { code: 'SUBSCRIBER_TOO_SLOW' },
      },
    ]);
    // What waited before the end was delivered, each event whole: the events the reader had, first to last but the ones refused.
    const events = stalled.results.slice(0, -1);
    expect(events.length).toBeGreaterThan(1);
    expect(events.length).toBeLessThan(given);
    expect(events).toEqual(received.slice(0, events.length));
  });
});

describe.each(stacks)('a subscription resuming from a cursor, with %s', (_mode, t) => {
  const stats = () => t.stack.gateway.subscriptions.stats();
  const giveBonus = () => t.emulator('recognition').control('bonuses', { giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: 'heavy', reason: REASON });
  const RESUMABLE = 'subscription ($after: String) { bonusCreated(filter: { hashtag: "heavy" }, after: $after) { cursor bonus { reason } } }';
  const cursorOf = (result: Collected['results'][number]) => (result.data as { bonusCreated: { cursor: string } }).bonusCreated.cursor;

  it('does not join a live stream whose events since its cursor are more bytes than its queue takes: it catches up on its own, and is not ended', async () => {
    const live = subscribeWs(t.graphqlUrl, RESUMABLE, { connectionParams: member });
    open.push(live);
    await waitUntil(() => stats().upstreams === 1, () => `the live stream (${JSON.stringify(stats())})`);
    for (let given = 0; given < 3; given += 1) await giveBonus();
    const cursors = (await live.waitFor(3)).map(cursorOf);
    // Two events of 48 KB since the first cursor: joining, it would be sent both at once, and ended on the second.
    const resumed = subscribeWs(t.graphqlUrl, RESUMABLE, { connectionParams: member, variables: { after: cursors[0] } });
    open.push(resumed);
    expect((await resumed.waitFor(2)).map(cursorOf)).toEqual(cursors.slice(1));
    await giveBonus();
    const next = cursorOf((await live.waitFor(4))[3]!);
    expect((await resumed.waitFor(3)).map(cursorOf)).toEqual([...cursors.slice(1), next]);
    await waitUntil(() => stats().upstreams === 1, () => `the streams merged (${JSON.stringify(stats())})`);
    expect(resumed.results.every((result) => !result.errors)).toBe(true);
  });
});
