import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startGateway } from '../../gateway/server.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { knownSecrets, testLogger } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeSse, subscribeWs, type Collected } from '../support/subscribers.ts';
import { composeWithKudos, startKudosSubgraph } from '../support/kudosSubgraph.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

// Every subscribe checks its credential upstream here, so the request log can count the checks;
// remembering them is tested in hardening/subscription-flood.test.ts.
const t = await startTestStack({ RECOGNITION_EMULATOR_RETRY_MS: '20', RECOGNITION_CREDENTIAL_CHECK_TTL_MS: '0' });
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services[0]!.subgraphUrl;
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const open: Collected[] = [];

beforeEach(async () => {
  await emulator.clearRequests();
});
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(subgraphUrl, 0);
});

const ws = (query: string, options: Parameters<typeof subscribeWs>[2] = {}) => {
  const subscription = subscribeWs(t.graphqlUrl, query, { connectionParams: member, ...options });
  open.push(subscription);
  return subscription;
};
const sse = (query: string, options: Parameters<typeof subscribeSse>[2] = {}) => {
  const subscription = subscribeSse(t.graphqlUrl, query, { headers: member, ...options });
  open.push(subscription);
  return subscription;
};
const giveBonus = (bonus: { giver_id?: string; receiver_ids?: string[]; hashtag?: string; amount?: number; reason?: string } = {}) =>
  emulator.control('bonuses', bonus) as Promise<{ bonus: { id: string } }>;

describe('subscriptions bridged from the recognition webhooks', () => {
  it('delivers a bonus given in the emulator over graphql-ws, with aliases and variables honoured', async () => {
    const subscription = ws(
      `subscription Feed($tag: String) {
        gift: bonusCreated(filter: { hashtag: $tag }) { eventId: id occurredAt cursor bonus { id amount why: reason hashtag giver { id displayName } receivers { id } } }
      }`,
      { variables: { tag: '#teamwork' } },
    );
    await waitForEventSubscriptions(subgraphUrl, 1);
    const { bonus } = await giveBonus({ giver_id: 'usr_003', receiver_ids: ['usr_004', 'usr_005'], hashtag: 'teamwork', amount: 25, reason: '+25 for pairing #teamwork' });
    const [result] = await subscription.waitFor(1);
    expect(result).toEqual({
      data: {
        gift: {
          eventId: `bonus.created:${bonus.id}`,
          occurredAt: expect.any(String),
          cursor: expect.any(String),
          bonus: { id: bonus.id, amount: 25, why: '+25 for pairing #teamwork', hashtag: '#teamwork', giver: { id: 'usr_003', displayName: expect.any(String) }, receivers: [{ id: 'usr_004' }, { id: 'usr_005' }] },
        },
      },
    });
  });

  it('delivers over SSE with the credential in the headers', async () => {
    const subscription = sse('subscription { bonusCreated { bonus { id hashtag } } }');
    await waitForEventSubscriptions(subgraphUrl, 1);
    const { bonus } = await giveBonus({ hashtag: 'shipit' });
    expect(await subscription.waitFor(1)).toEqual([{ data: { bonusCreated: { bonus: { id: bonus.id, hashtag: '#shipit' } } } }]);
  });

  it('refuses SSE single-connection mode in words, before any subscription exists', async () => {
    // What the graphql-sse client sends in that mode: a reservation, then operations carrying its token.
    const reservation = await fetch(t.graphqlUrl, { method: 'PUT', headers: member });
    expect(reservation.status).toBe(405);
    expect(await reservation.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    const operation = await fetch(t.graphqlUrl, {
      method: 'POST',
      headers: { ...member, 'content-type': 'application/json', 'x-graphql-event-stream-token': 'some-token' },
      body: JSON.stringify({ query: 'subscription { bonusCreated { bonus { id } } }', extensions: { operationId: '1' } }),
    });
    expect(operation.status).toBe(400);
    expect(await operation.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    expect(t.stack.gateway.subscriptions.stats().subscribers).toBe(0);
  });

  it('runs queries over the streaming transports too', async () => {
    const overWs = ws('{ reward(id: "rw_coffee_5") { name } }');
    const overSse = sse('{ reward(id: "rw_coffee_5") { name } }');
    for (const subscription of [overWs, overSse]) expect(await subscription.waitFor(1)).toEqual([{ data: { reward: { name: 'Coffee Card 5' } } }]);
  });

  it('applies hashtag, giver and receiver filters', async () => {
    const byTag = ws('subscription { bonusCreated(filter: { hashtag: "KINDNESS" }) { bonus { id } } }');
    const byGiver = ws('subscription { bonusCreated(filter: { giverId: "usr_010" }) { bonus { id } } }');
    const byReceiver = sse('subscription { bonusCreated(filter: { receiverId: "usr_011" }) { bonus { id } } }');
    await waitForEventSubscriptions(subgraphUrl, 3);
    const kind = await giveBonus({ hashtag: 'kindness', giver_id: 'usr_001', receiver_ids: ['usr_002'] });
    const fromTen = await giveBonus({ hashtag: 'shipit', giver_id: 'usr_010', receiver_ids: ['usr_002'] });
    const toEleven = await giveBonus({ hashtag: 'shipit', giver_id: 'usr_001', receiver_ids: ['usr_002', 'usr_011'] });
    const last = await giveBonus({ hashtag: 'kindness', giver_id: 'usr_010', receiver_ids: ['usr_011'] });
    const ids = async (subscription: Collected, count: number) => (await subscription.waitFor(count)).map((result) => (result.data!.bonusCreated as { bonus: { id: string } }).bonus.id);
    expect(await ids(byTag, 2)).toEqual([kind.bonus.id, last.bonus.id]);
    expect(await ids(byGiver, 2)).toEqual([fromTen.bonus.id, last.bonus.id]);
    expect(await ids(byReceiver, 2)).toEqual([toEleven.bonus.id, last.bonus.id]);
    expect(byTag.results).toHaveLength(2);
  });

  it('delivers achievements, filtered by receiver and importance', async () => {
    const subscription = ws('subscription { achievementEarned(filter: { receiverId: "usr_002", minImportance: 2 }) { id achievement { id title importance receiver { id } } } }');
    await waitForEventSubscriptions(subgraphUrl, 1);
    await emulator.control('achievements', { receiver_id: 'usr_002', importance: 1, title: 'Small' });
    await emulator.control('achievements', { receiver_id: 'usr_003', importance: 3, title: 'Other person' });
    await emulator.control('achievements', { receiver_id: 'usr_002', importance: 3, title: 'Big' });
    const [result] = await subscription.waitFor(1);
    expect(result!.data).toEqual({ achievementEarned: { id: expect.stringMatching(/^achievement_event\.created:/), achievement: { id: expect.any(String), title: 'Big', importance: 3, receiver: { id: 'usr_002' } } } });
  });

  it('replays from an `after` cursor what the log still holds, then goes live', async () => {
    const first = ws('subscription { bonusCreated { cursor bonus { id } } }');
    await waitForEventSubscriptions(subgraphUrl, 1);
    const one = await giveBonus();
    const two = await giveBonus();
    const [firstEvent] = await first.waitFor(2);
    const cursor = (firstEvent!.data!.bonusCreated as { cursor: string }).cursor;

    const resumed = sse('subscription ($after: String) { bonusCreated(after: $after) { bonus { id } } }', { variables: { after: cursor } });
    await waitForEventSubscriptions(subgraphUrl, 2);
    const three = await giveBonus();
    const received = (await resumed.waitFor(2)).map((result) => (result.data!.bonusCreated as { bonus: { id: string } }).bonus.id);
    expect(received).toEqual([two.bonus.id, three.bonus.id]);
    expect(received).not.toContain(one.bonus.id);
  });

  it('refuses a cursor it did not issue', async () => {
    const subscription = ws('subscription { bonusCreated(after: "bm90IGEgY3Vyc29y") { id } }');
    const [result] = await subscription.waitFor(1);
    expect(result!.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
  });

  it('shares one upstream stream and one execution per event among identical subscribers', async () => {
    const query = 'subscription { bonusCreated { bonus { id } } }';
    const subscribers = [ws(query), ws(query), sse(query)];
    const different = ws(query, { connectionParams: { 'x-recognition-token': DEMO_TOKENS.admin } });
    await waitForEventSubscriptions(subgraphUrl, 2);
    expect(t.stack.gateway.subscriptions.stats()).toMatchObject({ upstreams: 2, subscribers: 4 });
    const before = t.stack.gateway.subscriptions.stats().executions;
    const { bonus } = await giveBonus();
    for (const subscriber of [...subscribers, different]) expect(await subscriber.waitFor(1)).toEqual([{ data: { bonusCreated: { bonus: { id: bonus.id } } } }]);
    expect(t.stack.gateway.subscriptions.stats().executions - before).toBe(2);
    const metrics = await (await fetch(`${t.stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_subscription_upstreams 2$/m);
    expect(metrics).toMatch(/^gateway_subscription_subscribers 4$/m);
    // Two credentials, two checks upstream: identical subscribers added none.
    expect((await emulator.requests()).filter((request) => request.path === '/api/v1/api_keys')).toHaveLength(2);
  });

  it('gives a subscriber without a credential UNAUTHENTICATED and no events, over both transports', async () => {
    const noCredentialWs = ws('subscription { bonusCreated { id } }', { connectionParams: {} });
    const noCredentialSse = sse('subscription { bonusCreated { id } }', { headers: {} });
    const wrong = 'wrong-subscriber-token-8e1f2a';
    knownSecrets.add(wrong);
    const wrongCredential = ws('subscription { bonusCreated { id } }', { connectionParams: { 'x-recognition-token': wrong } });
    for (const subscription of [noCredentialWs, noCredentialSse, wrongCredential]) {
      const [result] = await subscription.waitFor(1);
      expect(result!.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(result!.data ?? null).toBeNull();
      await subscription.ended;
    }
    await giveBonus();
    for (const subscription of [noCredentialWs, noCredentialSse, wrongCredential]) expect(subscription.results).toHaveLength(1);
  });

  it('resolves fields that another subgraph contributes to the bonus, once per event', async () => {
    const kudos = await startKudosSubgraph();
    const gateway = await startGateway(
      readGatewayConfig({}, { port: 0, supergraphSdl: composeWithKudos(subgraphUrl, kudos.graphqlUrl), subgraphUrls: { recognition: subgraphUrl, kudos: kudos.graphqlUrl } }),
      testLogger('kudos-gateway'),
    );
    try {
      const query = 'subscription { bonusCreated { bonus { id hashtag celebration } } }';
      const subscribers = [subscribeWs(gateway.graphqlUrl, query, { connectionParams: member }), subscribeSse(gateway.graphqlUrl, query, { headers: member }), subscribeWs(gateway.graphqlUrl, query, { connectionParams: member })];
      open.push(...subscribers);
      await waitForEventSubscriptions(subgraphUrl, 1);
      const one = await giveBonus({ hashtag: 'mentoring' });
      const two = await giveBonus({ hashtag: 'mentoring' });
      for (const subscriber of subscribers) {
        expect(await subscriber.waitFor(2)).toEqual([
          { data: { bonusCreated: { bonus: { id: one.bonus.id, hashtag: '#mentoring', celebration: `Party for ${one.bonus.id}` } } } },
          { data: { bonusCreated: { bonus: { id: two.bonus.id, hashtag: '#mentoring', celebration: `Party for ${two.bonus.id}` } } } },
        ]);
      }
      // Three subscribers, two events: two entity lookups.
      expect(kudos.lookups).toEqual([one.bonus.id, two.bonus.id]);
    } finally {
      for (const subscription of open.splice(0)) subscription.close();
      await gateway.close();
      await kudos.close();
    }
  });
});
