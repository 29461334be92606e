import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { OTHER_STORE_ID, OTHER_TOKEN, SECOND_STORE_ID } from '../../emulators/messaging/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { DEMO_STORE_ID, member as messagingMember, messagingOf } from '../support/messagingPieces.ts';
import { startTestStack, type EmulatorControl } from '../support/stack.ts';
import { subscribeSse, subscribeWs, type Collected } from '../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';

/**
 * Events come from webhooks and callbacks, which never carry a subscriber's credential: the
 * subgraphs check it again while the subscription streams, once per TTL per credential. A short
 * TTL here, so a revocation shows within a second; the breakers off, so the 5xx a test injects
 * cannot leave them open for the tests after it.
 */
const TTL_MS = 500;
/** What a refused check may take to reach the client past the TTL: the call, the gateway, the socket; on a busy machine. */
const SLACK_MS = 1500;
const t = await startTestStack({
  RECOGNITION_CREDENTIAL_CHECK_TTL_MS: String(TTL_MS),
  MESSAGING_CREDENTIAL_CHECK_TTL_MS: String(TTL_MS),
  RECOGNITION_EMULATOR_RETRY_MS: '20',
  MESSAGING_EMULATOR_RETRY_MS: '20',
  CIRCUIT_BREAKER_FAILURES: '0',
  // A check that hangs is cut off after a second (a timeout, UPSTREAM_UNAVAILABLE).
  RECOGNITION_TIMEOUT_MS: '1000',
});
const recognition = t.emulator('recognition');
const recognitionSubgraph = t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
const m = messagingOf(t);
const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const open: Collected[] = [];

beforeEach(async () => {
  for (const emulator of [recognition, m.emulator]) {
    await fetch(`${emulator.url}/__emulator/faults`, { method: 'DELETE' });
    await emulator.clearRequests();
  }
});
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(recognitionSubgraph, 0);
  await waitForEventSubscriptions(m.subgraphUrl, 0, 'messaging_event_subscriptions');
});

const ws = (query: string, connectionParams: Record<string, string>, variables: Record<string, unknown> = {}) => {
  const subscription = subscribeWs(t.graphqlUrl, query, { connectionParams, variables });
  open.push(subscription);
  return subscription;
};
const sse = (query: string, headers: Record<string, string>, variables: Record<string, unknown> = {}) => {
  const subscription = subscribeSse(t.graphqlUrl, query, { headers, variables });
  open.push(subscription);
  return subscription;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves true when the stream ended, false when it was still open after `ms`. */
const endsWithin = (subscription: Collected, ms: number) => Promise.race([subscription.ended.then(() => true), sleep(ms).then(() => false)]);
const codesOf = (subscription: Collected) => subscription.results.flatMap((result) => result.errors ?? []).map((error) => error.extensions?.code);
const callsTo = async (emulator: EmulatorControl, matches: (path: string) => boolean) => (await emulator.requests()).filter((request) => request.method === 'GET' && matches(request.path));

const BONUSES = 'subscription ($tag: String) { bonusCreated(filter: { hashtag: $tag }) { bonus { id hashtag } } }';
const ACHIEVEMENTS = 'subscription { achievementEarned { achievement { id } } }';
const giveBonus = (hashtag: string) => recognition.control('bonuses', { giver_id: 'usr_001', receiver_ids: ['usr_004'], hashtag, amount: 5 }) as Promise<{ bonus: { id: string } }>;
const verifyCalls = () => callsTo(recognition, (path) => path === '/api/v1/api_keys');

/** A fresh API key of usr_003, made by the admin: one the test can revoke. */
async function freshKey(label: string): Promise<{ id: string; token: string }> {
  const created = await t.gql<{ createApiKey: { token: string } }>('mutation ($label: String!) { createApiKey(input: { label: $label, userId: "usr_003" }) { token } }', { variables: { label }, headers: admin });
  expect(created.errors).toBeUndefined();
  const token = created.data!.createApiKey.token;
  knownSecrets.add(token);
  const keys = await t.gql<{ apiKeys: { id: string; label: string }[] }>('{ apiKeys(userId: "usr_003") { id label } }', { headers: admin });
  return { id: keys.data!.apiKeys.find((key) => key.label === label)!.id, token };
}

describe('recognition subscriptions while their credential is revoked', () => {
  it('end with UNAUTHENTICATED within the TTL of the key’s deletion, every one of that key, and are not resumed', async () => {
    const key = await freshKey('revoked while streaming');
    const withKey = { 'x-recognition-token': key.token };
    const doomed = [ws(BONUSES, withKey, { tag: 'revoke-a' }), ws(BONUSES, withKey), sse(ACHIEVEMENTS, withKey)];
    const bystander = ws(BONUSES, member);
    await waitForEventSubscriptions(recognitionSubgraph, 4);
    const { bonus } = await giveBonus('revoke-a');
    await doomed[0]!.waitFor(1);
    await bystander.waitFor(1);

    const deleted = await t.gql<{ deleteApiKey: { success: boolean } }>('mutation ($id: ID!) { deleteApiKey(id: $id) { success } }', { variables: { id: key.id }, headers: admin });
    expect(deleted.data?.deleteApiKey.success).toBe(true);
    const revokedAt = Date.now();
    for (const subscription of doomed) expect(await endsWithin(subscription, TTL_MS + SLACK_MS), 'ended within the TTL').toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(TTL_MS + SLACK_MS);
    for (const subscription of doomed) {
      expect(codesOf(subscription)).toEqual(['UNAUTHENTICATED']);
      expect(subscription.results.at(-1)!.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'recognition', status: 401 });
    }
    expect((doomed[0]!.results[0]!.data!.bonusCreated as { bonus: { id: string } }).bonus.id).toBe(bonus.id);

    // Not resumed: the gateway holds none of them, the subgraph follows only the bystander's, and it streams on.
    await waitForEventSubscriptions(recognitionSubgraph, 1);
    await sleep(2 * TTL_MS);
    await waitForEventSubscriptions(recognitionSubgraph, 1);
    const next = await giveBonus('revoke-b');
    expect((await bystander.waitFor(2))[1]!.data).toEqual({ bonusCreated: { bonus: { id: next.bonus.id, hashtag: '#revoke-b' } } });
    for (const subscription of doomed) expect(subscription.results).toHaveLength(subscription === doomed[2] ? 1 : 2);
    // Subscribing again is refused at once.
    const again = ws(BONUSES, withKey);
    await again.ended;
    expect(codesOf(again)).toEqual(['UNAUTHENTICATED']);
  });

  it('end with FORBIDDEN when the service forbids the credential', async () => {
    // Its own token: the verdict is remembered for a TTL, and the tests after this one subscribe as the member.
    const subscription = ws(BONUSES, { 'x-recognition-token': DEMO_TOKENS.readOnly });
    await waitForEventSubscriptions(recognitionSubgraph, 1);
    await recognition.fault({ path: '/api/v1/api_keys', method: 'GET', status: 403, body: { success: false, message: 'This key is suspended' } });
    expect(await endsWithin(subscription, TTL_MS + SLACK_MS)).toBe(true);
    expect(subscription.results.at(-1)!.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', service: 'recognition', status: 403 });
  });

  it('stream on through 5xx, timeouts and rate limits of the check, trying again each TTL', async () => {
    const subscription = ws(BONUSES, member);
    await waitForEventSubscriptions(recognitionSubgraph, 1);
    await recognition.clearRequests();
    // A 503 answered to every attempt of two checks (each retried twice), then a 429, then no answer in time.
    await recognition.fault({ path: '/api/v1/api_keys', method: 'GET', status: 503, body: { success: false, message: 'maintenance' }, times: 6 });
    await recognition.fault({ path: '/api/v1/api_keys', method: 'GET', status: 429, body: { success: false, message: 'slow down' }, times: 1 });
    await recognition.fault({ path: '/api/v1/api_keys', method: 'GET', latencyMs: 1500, times: 1 });
    // Past the hung one, a check answered in time.
    await waitUntil(
      async () => {
        const calls = await verifyCalls();
        return calls.length >= 9 && calls.at(-1)!.status === 200;
      },
      () => 'a check answered after the faults',
      10 * TTL_MS + SLACK_MS * 2,
    );
    expect((await verifyCalls()).map((call) => call.status).slice(0, 7)).toEqual([503, 503, 503, 503, 503, 503, 429]);
    expect(await endsWithin(subscription, 0)).toBe(false);
    const { bonus } = await giveBonus('after-outage');
    expect((await subscription.waitFor(1))[0]!.data).toEqual({ bonusCreated: { bonus: { id: bonus.id, hashtag: '#after-outage' } } });
    expect(codesOf(subscription)).toEqual([]);
  });

  it('costs one check per TTL for a credential, however many subscriptions it holds open', async () => {
    const subscriptions = [
      ws(BONUSES, member, { tag: 'one' }),
      ws(BONUSES, member, { tag: 'two' }),
      ws(BONUSES, member, { tag: 'three' }),
      ws(ACHIEVEMENTS, member),
      sse(BONUSES, member, { tag: 'four' }),
      // The same as one above: the gateway shares its stream, so the subgraph holds five.
      sse(ACHIEVEMENTS, member),
    ];
    await waitForEventSubscriptions(recognitionSubgraph, 5);
    await recognition.clearRequests();
    const from = Date.now();
    await sleep(6 * TTL_MS);
    const calls = await verifyCalls();
    const elapsed = Date.now() - from;
    // Checked again all along (a timer may run late on a busy machine), never once per subscription.
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(Math.ceil(elapsed / TTL_MS) + 1);
    expect(calls.every((call) => call.status === 200)).toBe(true);
    for (const subscription of subscriptions) expect(await endsWithin(subscription, 0)).toBe(false);
  });
});

const INBOUND = 'subscription ($filter: InboundMessageFilter!) { inboundMessageReceived(filter: $filter) { body keyword } }';
const STATUS = 'subscription ($filter: SubscriberStatusFilter!) { subscriberStatusChanged(filter: $filter) { mobileId subscriberStatus } }';
const storeReads = () => callsTo(m.emulator, (path) => path.startsWith('/account/store/detail/'));
const revokedBody = { status: 'fail', code: 401, message: 'Invalid or expired token', results: [] };

describe('messaging subscriptions while their credential is revoked', () => {
  it('end with UNAUTHENTICATED within the TTL, every one of that token, and not another token’s', async () => {
    const doomed = [ws(INBOUND, messagingMember, { filter: { storeId: DEMO_STORE_ID } }), ws(STATUS, messagingMember, { filter: { storeId: SECOND_STORE_ID } }), sse(INBOUND, messagingMember, { filter: { storeId: DEMO_STORE_ID, keyword: 'bread' } })];
    const otherAccount = ws(INBOUND, { 'x-messaging-token': OTHER_TOKEN }, { filter: { storeId: OTHER_STORE_ID } });
    await waitForEventSubscriptions(m.subgraphUrl, 4, 'messaging_event_subscriptions');
    await m.text('15557770002', 'BREAD');
    await doomed[0]!.waitFor(1);

    // The service stops accepting the demo token: both of its stores answer 401 from now on.
    for (const storeId of [DEMO_STORE_ID, SECOND_STORE_ID]) await m.emulator.fault({ path: `/account/store/detail/${storeId}`, method: 'GET', status: 401, body: revokedBody });
    const revokedAt = Date.now();
    for (const subscription of doomed) expect(await endsWithin(subscription, TTL_MS + SLACK_MS), 'ended within the TTL').toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(TTL_MS + SLACK_MS);
    for (const subscription of doomed) expect(subscription.results.at(-1)!.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'messaging', status: 401 });
    expect(doomed[0]!.results[0]!.data).toEqual({ inboundMessageReceived: { body: 'BREAD', keyword: 'BREAD' } });

    await waitForEventSubscriptions(m.subgraphUrl, 1, 'messaging_event_subscriptions');
    await sleep(2 * TTL_MS);
    await waitForEventSubscriptions(m.subgraphUrl, 1, 'messaging_event_subscriptions');
    expect(await endsWithin(otherAccount, 0)).toBe(false);
    expect((await storeReads()).some((call) => call.path === `/account/store/detail/${OTHER_STORE_ID}` && call.status === 200)).toBe(true);
  });

  it('stream on through 5xx and rate limits of the check', async () => {
    const subscription = ws(INBOUND, messagingMember, { filter: { storeId: DEMO_STORE_ID } });
    await waitForEventSubscriptions(m.subgraphUrl, 1, 'messaging_event_subscriptions');
    // Only the checks from now on: subscribing read the store too.
    await m.emulator.clearRequests();
    await m.emulator.fault({ path: `/account/store/detail/${DEMO_STORE_ID}`, method: 'GET', status: 503, raw: 'Service Unavailable', times: 6 });
    await m.emulator.fault({ path: `/account/store/detail/${DEMO_STORE_ID}`, method: 'GET', status: 429, body: { status: 'fail', code: 429, message: 'Too many requests', results: [] }, times: 1 });
    await waitUntil(async () => (await storeReads()).some((call) => call.status === 200), () => 'a store read answered after the faults', 6 * TTL_MS + SLACK_MS * 2);
    expect((await storeReads()).map((call) => call.status).slice(0, 7)).toEqual([503, 503, 503, 503, 503, 503, 429]);
    expect(await endsWithin(subscription, 0)).toBe(false);
    await m.text('15557770001', 'HOURS');
    expect((await subscription.waitFor(1))[0]!.data).toEqual({ inboundMessageReceived: { body: 'HOURS', keyword: 'HOURS' } });
  });

  it('costs one store read per TTL for a token, however many subscriptions it holds open', async () => {
    const subscriptions = [
      ws(INBOUND, messagingMember, { filter: { storeId: DEMO_STORE_ID } }),
      ws(INBOUND, messagingMember, { filter: { storeId: DEMO_STORE_ID, keyword: 'bread' } }),
      ws(INBOUND, messagingMember, { filter: { storeId: SECOND_STORE_ID } }),
      ws(STATUS, messagingMember, { filter: { storeId: DEMO_STORE_ID } }),
      sse(STATUS, messagingMember, { filter: { storeId: SECOND_STORE_ID } }),
    ];
    await waitForEventSubscriptions(m.subgraphUrl, subscriptions.length, 'messaging_event_subscriptions');
    await m.emulator.clearRequests();
    const from = Date.now();
    await sleep(6 * TTL_MS);
    const calls = await storeReads();
    const elapsed = Date.now() - from;
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(Math.ceil(elapsed / TTL_MS) + 1);
    for (const subscription of subscriptions) expect(await endsWithin(subscription, 0)).toBe(false);
  });
});
