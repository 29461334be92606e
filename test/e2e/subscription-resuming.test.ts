import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse, type ExecutionResult } from 'graphql';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { isPushIterator } from '../../gateway/subscriptions/pushIterator.ts';
import { knownSecrets } from '../support/logs.ts';
import { startRecognitionEmulator, startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { subscribeMultipart, subscribeSse, subscribeWs, type Collected } from '../support/subscribers.ts';
import { startTcpRelay } from '../support/tcpRelay.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';

/**
 * Exactly once per subscriber (docs/EVENTS.md, "Guarantees"), for the subscriptions QA pass 9 found
 * it broken for: a root field inside a fragment, a client alias the gateway's own used to take, and
 * clients resuming from a cursor into a stream others already hold.
 */

const SECRET = 'resuming-secret-7c1e9a3b5d';
knownSecrets.add(SECRET);
const emulator = await startRecognitionEmulator();
const subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRET, credentialCheckTtlMs: 60_000 });
const relay = await startTcpRelay(subgraph.graphqlUrl);
const gateway = await startRecognitionGateway(relay.url);
afterAll(async () => {
  await gateway.close();
  await relay.close();
  await subgraph.close();
  await emulator.close();
});

const member = { 'x-recognition-token': DEMO_TOKENS.member };
const open: Collected[] = [];
afterEach(async () => {
  relay.set('pass');
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(subgraph.graphqlUrl, 0);
  await waitUntil(() => gateway.subscriptions.stats().upstreams === 0, () => 'every gateway stream let go');
});

const ws = (query: string, variables?: Record<string, unknown>) => {
  const subscription = subscribeWs(gateway.graphqlUrl, query, { connectionParams: member, ...(variables ? { variables } : {}) });
  open.push(subscription);
  return subscription;
};
const sse = (query: string, variables?: Record<string, unknown>) => {
  const subscription = subscribeSse(gateway.graphqlUrl, query, { headers: member, ...(variables ? { variables } : {}) });
  open.push(subscription);
  return subscription;
};
const multipart = (query: string, variables?: Record<string, unknown>) => {
  const subscription = subscribeMultipart(gateway.graphqlUrl, query, { headers: member, ...(variables ? { variables } : {}) });
  open.push(subscription);
  return subscription;
};

const delivered = async () => ((await (await fetch(`${emulator.url}/__emulator/deliveries`)).json()) as { state: string }[]).every((delivery) => delivery.state === 'delivered');
/** Gives a bonus and waits until its webhook reached the subgraph's log. */
const giveBonus = async () => {
  const { bonus } = (await emulator.control.control('bonuses', {})) as { bonus: { id: string } };
  await waitUntil(delivered, () => `the delivery of ${bonus.id}`);
  return `bonus.created:${bonus.id}`;
};
type BonusEvent = { id: string; cursor: string; [field: string]: unknown };
const events = (results: ExecutionResult<Record<string, unknown>>[]) =>
  results.map((result) => {
    if (result.errors?.length) return result.errors;
    return result.data!.bonusCreated as BonusEvent;
  });
const ids = (results: ExecutionResult<Record<string, unknown>>[]) => events(results).map((event) => ('id' in event ? event.id : event));

/** Breaks the gateway's upstream sockets, gives bonuses while it cannot reconnect, then lets it. */
async function dropUpstreamDuring(count: number, streams: number): Promise<string[]> {
  relay.set('refuse');
  await waitForEventSubscriptions(subgraph.graphqlUrl, 0);
  const given: string[] = [];
  for (let index = 0; index < count; index += 1) given.push(await giveBonus());
  relay.set('pass');
  await waitForEventSubscriptions(subgraph.graphqlUrl, streams);
  return given;
}

describe('a root field inside a fragment', () => {
  it('is resumed after an upstream drop as a plain root field is: nothing lost, nothing repeated', async () => {
    const plain = ws('subscription { bonusCreated { id cursor } }');
    const spread = ws('subscription { ...Feed } fragment Feed on Subscription { bonusCreated { cursor id } }');
    const inline = ws('subscription { ... on Subscription { bonusCreated { id cursor occurredAt } } }');
    const bare = ws('subscription { ... { bonusCreated { id occurredAt cursor } } }');
    await waitForEventSubscriptions(subgraph.graphqlUrl, 4);
    const first = await giveBonus();
    for (const subscription of [plain, spread, inline, bare]) await subscription.waitFor(1);
    const during = await dropUpstreamDuring(3, 4);
    const last = await giveBonus();
    for (const subscription of [plain, spread, inline, bare]) {
      expect(ids(await subscription.waitFor(5))).toEqual([first, ...during, last]);
    }
    // One more, to be sure nothing was queued twice behind them.
    const extra = await giveBonus();
    for (const subscription of [plain, spread, inline, bare]) {
      expect(ids(await subscription.waitFor(6))).toEqual([first, ...during, last, extra]);
      expect(subscription.results).toHaveLength(6);
    }
  });

  it('resumes from the gateway’s last cursor, not again from the client’s `after`, when that `after` sits in the fragment', async () => {
    const probe = ws('subscription { bonusCreated { id cursor } }');
    await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
    const anchor = await giveBonus();
    const [anchorEvent] = events(await probe.waitFor(1)) as BonusEvent[];
    expect(anchorEvent!.id).toBe(anchor);
    probe.close();
    await waitForEventSubscriptions(subgraph.graphqlUrl, 0);
    const next = await giveBonus();

    const resumed = ws('subscription ($after: String) { ...Feed } fragment Feed on Subscription { bonusCreated(after: $after) { id cursor } }', { after: anchorEvent!.cursor });
    expect(ids(await resumed.waitFor(1))).toEqual([next]);
    const during = await dropUpstreamDuring(2, 1);
    const last = await giveBonus();
    expect(ids(await resumed.waitFor(4))).toEqual([next, ...during, last]);
    const extra = await giveBonus();
    expect(ids(await resumed.waitFor(5))).toEqual([next, ...during, last, extra]);
    expect(resumed.results).toHaveLength(5);
  });
});

describe('a client alias named as the gateway’s private one', () => {
  it('keeps the client’s field, and the stream still resumes after an upstream drop', async () => {
    const subscription = ws('subscription { bonusCreated { id gatewayResumeCursor: id cursor } }');
    await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
    const first = await giveBonus();
    expect(events(await subscription.waitFor(1))).toEqual([{ id: first, gatewayResumeCursor: first, cursor: expect.any(String) }]);
    const during = await dropUpstreamDuring(2, 1);
    const last = await giveBonus();
    const received = await subscription.waitFor(4);
    expect(ids(received)).toEqual([first, ...during, last]);
    for (const event of events(received) as BonusEvent[]) expect(event.gatewayResumeCursor).toBe(event.id);
  });
});

describe('clients resuming from the same cursor', () => {
  /** Three bonuses given while a probe watched, and the first one's cursor; then no stream is open. */
  async function threeBonusesAndFirstCursor(): Promise<{ given: string[]; cursor: string }> {
    const probe = ws('subscription { bonusCreated { id cursor } }');
    await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
    const given = [await giveBonus(), await giveBonus(), await giveBonus()];
    const cursor = (events(await probe.waitFor(3))[0] as BonusEvent).cursor;
    probe.close();
    await waitForEventSubscriptions(subgraph.graphqlUrl, 0);
    return { given, cursor };
  }

  const query = 'subscription ($after: String) { bonusCreated(after: $after) { id cursor } }';

  it('each get every event after their own `after`, whether they open the stream or join it, on every transport', async () => {
    const { given, cursor } = await threeBonusesAndFirstCursor();

    const opener = ws(query, { after: cursor });
    expect(ids(await opener.waitFor(2))).toEqual(given.slice(1));
    // Later, with the stream open and its replay delivered, the same `after` from other clients.
    const joiners = [ws(query, { after: cursor }), sse(query, { after: cursor }), multipart(query, { after: cursor })];
    for (const joiner of joiners) expect(ids(await joiner.waitFor(2))).toEqual(given.slice(1));
    // They hold one stream between them, and each gets what comes next once.
    expect(gateway.subscriptions.stats()).toMatchObject({ upstreams: 1, subscribers: 4 });
    const next = await giveBonus();
    for (const subscription of [opener, ...joiners]) {
      expect(ids(await subscription.waitFor(3))).toEqual([...given.slice(1), next]);
      expect(subscription.results).toHaveLength(3);
    }
  });

  it('join a live stream whose recent events reach back to their cursor, with what they missed, and open no stream for it', async () => {
    const live = ws('subscription { bonusCreated { id cursor } }');
    await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
    const given = [await giveBonus(), await giveBonus(), await giveBonus()];
    const cursors = (events(await live.waitFor(3)) as BonusEvent[]).map((event) => event.cursor);

    const resumed = [ws(query, { after: cursors[0] }), sse(query, { after: cursors[1] }), multipart(query, { after: cursors[0] })];
    expect(ids(await resumed[0]!.waitFor(2))).toEqual(given.slice(1));
    expect(ids(await resumed[1]!.waitFor(1))).toEqual(given.slice(2));
    expect(ids(await resumed[2]!.waitFor(2))).toEqual(given.slice(1));
    expect(gateway.subscriptions.stats()).toMatchObject({ upstreams: 1, subscribers: 4 });
    const next = await giveBonus();
    expect(ids(await live.waitFor(4))).toEqual([...given, next]);
    expect(ids(await resumed[0]!.waitFor(3))).toEqual([...given.slice(1), next]);
    expect(ids(await resumed[1]!.waitFor(2))).toEqual([given[2], next]);
    expect(ids(await resumed[2]!.waitFor(3))).toEqual([...given.slice(1), next]);
  });

  it('catch up on a stream of their own from a cursor no open stream reaches, which then merges into the live one', async () => {
    const { given, cursor } = await threeBonusesAndFirstCursor();

    const live = ws('subscription { bonusCreated { id cursor } }');
    await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
    const older = ws(query, { after: cursor });
    expect(ids(await older.waitFor(2))).toEqual(given.slice(1));
    expect(gateway.subscriptions.stats().upstreams).toBe(2);
    const next = await giveBonus();
    expect(ids(await live.waitFor(1))).toEqual([next]);
    expect(ids(await older.waitFor(3))).toEqual([...given.slice(1), next]);
    // Both streams delivered the same event: the one behind joined the other and let its stream go.
    await waitUntil(() => gateway.subscriptions.stats().upstreams === 1, () => `the streams merged (${JSON.stringify(gateway.subscriptions.stats())})`);
    await waitForEventSubscriptions(subgraph.graphqlUrl, 1);

    const late = sse(query, { after: cursor });
    expect(ids(await late.waitFor(3))).toEqual([...given.slice(1), next]);
    const last = await giveBonus();
    expect(ids(await live.waitFor(2))).toEqual([next, last]);
    for (const subscription of [older, late]) {
      expect(ids(await subscription.waitFor(4))).toEqual([...given.slice(1), next, last]);
      expect(subscription.results).toHaveLength(4);
    }
    expect(live.results).toHaveLength(2);
  });

  it('let go of a subscriber the merge itself ends (too slow for what it missed): no stream or place is kept for it', { timeout: 30_000 }, async () => {
    const small = await startRecognitionGateway(relay.url, { subscriptionLimits: { perConnection: 50, perCredential: 100, streamsPerCredential: 50, queuedEventsPerSubscriber: 30 } });
    try {
      const live = subscribeWs(small.graphqlUrl, 'subscription { bonusCreated { id cursor } }', { connectionParams: member });
      open.push(live);
      await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
      for (let index = 0; index < 40; index += 1) await giveBonus();
      const first = events(await live.waitFor(40, 20_000))[0] as BonusEvent;
      // A subscriber that never reads (nothing takes its events from the gateway): 39 missed is
      // more than its 30, so it catches up on a stream of its own. That stream reaches the live
      // one's last 29 events after 10 events of its own, and merging pushes those 29 onto its 10.
      const behind = await small.subscriptions.subscribe({ document: parse(query), variables: { after: first.cursor }, headers: member });
      if (!isPushIterator(behind)) throw new Error(`refused: ${JSON.stringify(behind)}`);
      await waitUntil(() => small.subscriptions.stats().upstreams === 1 && small.subscriptions.stats().subscribers === 1, () => `the merge, and its subscriber let go (${JSON.stringify(small.subscriptions.stats())})`);
      const read: unknown[] = [];
      const ending = await (async () => {
        try {
          for await (const result of behind) read.push(result);
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(read).toHaveLength(30);
      expect(ending).toMatchObject({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } });
      live.close();
      await waitUntil(() => small.subscriptions.stats().upstreams === 0 && small.subscriptions.stats().subscribers === 0, () => `every stream let go (${JSON.stringify(small.subscriptions.stats())})`);
    } finally {
      await small.close();
    }
  });

  it('count a stream of their own against MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL while they catch up', async () => {
    const capped = await startRecognitionGateway(relay.url, { subscriptionLimits: { perConnection: 50, perCredential: 100, streamsPerCredential: 1, queuedEventsPerSubscriber: 1000 } });
    try {
      const on = (query: string, variables?: Record<string, unknown>) => {
        const subscription = subscribeWs(capped.graphqlUrl, query, { connectionParams: member, ...(variables ? { variables } : {}) });
        open.push(subscription);
        return subscription;
      };
      // A cursor from before the capped gateway's stream opened, read through the other gateway.
      const probe = ws('subscription { bonusCreated { id cursor } }');
      await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
      await giveBonus();
      const olderCursor = (events(await probe.waitFor(1))[0] as BonusEvent).cursor;

      const live = on('subscription { bonusCreated { id cursor } }');
      await waitForEventSubscriptions(subgraph.graphqlUrl, 2);
      const given = [await giveBonus(), await giveBonus()];
      const cursors = (events(await live.waitFor(2)) as BonusEvent[]).map((event) => event.cursor);
      // Its cursor is in the live stream's hand: it joins, with no second stream.
      const joined = on(query, { after: cursors[0] });
      expect(ids(await joined.waitFor(1))).toEqual([given[1]]);
      expect(capped.subscriptions.stats()).toMatchObject({ upstreams: 1, subscribers: 2 });
      // One from before needs a stream of its own to catch up: refused at the cap, in words.
      const older = on(query, { after: olderCursor });
      await older.ended;
      expect(older.results).toEqual([{ errors: [{ message: expect.stringContaining('MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL'), extensions: { code: 'RATE_LIMITED' } }] }]);
      expect(capped.subscriptions.stats()).toMatchObject({ upstreams: 1, subscribers: 2 });
    } finally {
      await capped.close();
    }
  });
});
