import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { createMemoryLog, jsonBytes } from '../../../subgraphs/kit/events/memoryLog.ts';
import { createRedisLog } from '../../../subgraphs/kit/events/redisLog.ts';
import { DeliveryRejected, contentHash } from '../../../subgraphs/kit/events/webhookReceiver.ts';
import { Redis } from 'ioredis';
import { knownSecrets } from '../../support/logs.ts';
import { DEMO_STORE_ID, member, messagingOf } from '../../support/messagingPieces.ts';
import { startRedis } from '../../support/redisServer.ts';
import { startTestStack } from '../../support/stack.ts';
import { subscribeWs, type Collected } from '../../support/subscribers.ts';
import { waitForEventSubscriptions } from '../../support/waitFor.ts';

/**
 * Issue 14, items 11 and 14, on the webhook side: a delivery's bad field is normalised when it
 * arrives (no subscriber gets an error for it afterwards), a delivery nested deeper than any real
 * payload is refused with 400 (a 500 would be redelivered for ever), and the event log is bounded
 * in bytes as well as in events, in memory and on Redis.
 */
const SECRET = 'hardening-webhook-secret-8c1e';
const CALLBACK_SECRET = 'hardening-callback-secret-3f9a';
knownSecrets.add(SECRET).add(CALLBACK_SECRET);
const MiB = 1024 * 1024;
const t = await startTestStack({ RECOGNITION_WEBHOOK_SECRET: SECRET, RECOGNITION_EVENT_LOG_MAX_BYTES: String(MiB), MESSAGING_CALLBACK_SECRET: CALLBACK_SECRET });
const subgraph = t.stack.services[0]!.subgraphUrl.replace(/\/graphql$/, '');
const receiver = `${subgraph}/webhooks/recognition/${SECRET}`;
const m = messagingOf(t);
const inboundReceiver = `${m.subgraphOrigin}/callbacks/messaging/inbound/${CALLBACK_SECRET}`;
const statusReceiver = `${m.subgraphOrigin}/callbacks/messaging/status/${CALLBACK_SECRET}`;
const open: Collected[] = [];
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(`${subgraph}/graphql`, 0);
  await waitForEventSubscriptions(m.subgraphUrl, 0, 'messaging_event_subscriptions');
});

const post = (body: string) => fetch(receiver, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const delivery = (id: string, data: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'bonus.created', created_at: '2026-11-22T10:00:00Z', ...envelope, data: { id, created_at: '2026-11-22T10:00:00Z', amount: 5, reason: 'thanks', receivers: [], ...data } });

async function subscribe(query: string, variables: Record<string, unknown> = {}) {
  const subscription = subscribeWs(t.graphqlUrl, query, { variables, connectionParams: { 'x-recognition-token': DEMO_TOKENS.member } });
  open.push(subscription);
  await waitForEventSubscriptions(`${subgraph}/graphql`, open.length);
  return subscription;
}

describe('a delivery with fields the schema cannot carry', () => {
  it('reaches subscribers with the bad instants and counts dropped, not as an error', async () => {
    const subscription = await subscribe('subscription { bonusCreated { id occurredAt bonus { id createdAt amount giver { id lastActiveAt earningBalance } } } }');
    const before = Date.now();
    const response = await post(
      delivery('bon_bad_fields', { created_at: 'not a date', amount: 1e12, giver: { id: 'usr_001', last_active_at: 'yesterday-ish', earning_balance: 'lots' } }, { created_at: 'also not a date' }),
    );
    expect(response.status).toBe(202);
    const [result] = await subscription.waitFor(1);
    expect(result!.errors).toBeUndefined();
    const event = result!.data!.bonusCreated as { occurredAt: string; bonus: Record<string, unknown> };
    expect(event.bonus).toEqual({ id: 'bon_bad_fields', createdAt: null, amount: null, giver: { id: 'usr_001', lastActiveAt: null, earningBalance: null } });
    // The time of receipt stands in for an instant that cannot be read.
    expect(Date.parse(event.occurredAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('keeps an instant in another shape the scalar reads, in its canonical form', async () => {
    const subscription = await subscribe('subscription { bonusCreated { occurredAt bonus { createdAt } } }');
    expect((await post(delivery('bon_offset', { created_at: '2026-11-22T12:00:00+02:00' }))).status).toBe(202);
    const [result] = await subscription.waitFor(1);
    expect(result).toEqual({ data: { bonusCreated: { occurredAt: '2026-11-22T10:00:00.000Z', bonus: { createdAt: '2026-11-22T10:00:00.000Z' } } } });
  });
});

describe('a delivery nested 20,000 deep', () => {
  it('is refused with 400 and a body that says why; the receiver keeps working', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    // Without an id the bonus is known by a hash of its content, which walked the whole value.
    const withoutId = `{"type":"bonus.created","data":{"reason":"deep","extra":${deep}}}`;
    for (const body of [withoutId, delivery('bon_deep', { extra: '__DEEP__' }).replace('"__DEEP__"', deep), deep]) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'body nests objects and arrays deeper than 32 levels' });
    }
    // Brackets inside strings are text, not nesting.
    expect((await post(delivery('bon_brackets', { reason: '['.repeat(5000) }))).status).toBe(202);
  });

  it('is refused with 400 under any content type, and whatever the content type says', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const body = `{"type":"bonus.created","data":{"reason":"deep","extra":${deep}}}`;
    for (const headers of [{ 'content-type': 'text/plain' }, {}, { 'content-type': 'application/x-www-form-urlencoded' }] as Record<string, string>[]) {
      // A Buffer body goes without a content type unless one is given.
      const response = await fetch(receiver, { method: 'POST', headers, body: Buffer.from(body) });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'body nests objects and arrays deeper than 32 levels' });
    }
  });
});

describe('the content hash', () => {
  it('is the same for the same content in any key order, and refuses a value deeper than a delivery may be instead of overflowing', () => {
    expect(contentHash({ b: [1, { d: 2, c: 3 }], a: 'x' })).toBe(contentHash({ a: 'x', b: [1, { c: 3, d: 2 }] }));
    let deep: unknown = [];
    for (let level = 0; level < 20_000; level += 1) deep = [deep];
    expect(() => contentHash({ deep })).toThrow(DeliveryRejected);
    expect(() => contentHash({ deep })).toThrow('body nests objects and arrays deeper than 32 levels');
  });
});

describe('a delivery whose fields are objects where text belongs', () => {
  it('is read without them, never failed: an object with its own toString cannot be made text', async () => {
    const subscription = await subscribe('subscription { bonusCreated { bonus { id reason giver { displayName } receivers { displayName } } } }');
    const poisoned = { toString: 1 };
    // An unreadable type names no event type.
    expect((await post(JSON.stringify({ type: poisoned, data: { id: 'bon_poison_type' } }))).status).toBe(400);
    const response = await post(
      JSON.stringify({ type: 'bonus.created', data: { id: 'bon_poisoned', reason: [poisoned], giver: { id: 'usr_001', display_name: poisoned }, receivers: [{ id: 'usr_002', display_name: [[poisoned]] }] } }),
    );
    expect(response.status).toBe(202);
    const [result] = await subscription.waitFor(1);
    expect(result).toEqual({ data: { bonusCreated: { bonus: { id: 'bon_poisoned', reason: null, giver: { displayName: null }, receivers: [{ displayName: null }] } } } });
    // An id that is not text is no id: the content hash stands in.
    expect((await post(JSON.stringify({ type: 'bonus.created', data: { id: poisoned, reason: 'hashed' } }))).status).toBe(202);
  });
});

describe('a messaging callback nested 20,000 deep', () => {
  const STATUS = 'subscription($filter: SubscriberStatusFilter!) { subscriberStatusChanged(filter: $filter) { messageId reason } }';
  const INBOUND = 'subscription($filter: InboundMessageFilter!) { inboundMessageReceived(filter: $filter) { messageId body } }';
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  const refusal = (what: string) => ({ error: `${what} nests objects and arrays deeper than 32 levels` });
  const form = (fields: Record<string, string>) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    return body;
  };

  it('is refused with 400 in the body under any content type, and in Details as JSON, urlencoded or multipart; nothing reaches subscribers', async () => {
    const follow = (query: string) => {
      const subscription = subscribeWs(t.graphqlUrl, query, { variables: { filter: { storeId: DEMO_STORE_ID } }, connectionParams: member });
      open.push(subscription);
      return subscription;
    };
    const status = follow(STATUS);
    const inbound = follow(INBOUND);
    await waitForEventSubscriptions(m.subgraphUrl, 2, 'messaging_event_subscriptions');

    // Without a message id the text is known by a hash of the whole body; with one, the deep field is never read at all.
    const inboundBody = `{"storeId":"${DEMO_STORE_ID}","from":"+15550000003","body":"hi","x":${deep(30_000)}}`;
    const withId = inboundBody.replace('"body":"hi"', '"body":"hi","messageId":"5a1f0c9e8b3d4e00dd000001"');
    const details = (levels: number) => `{"mobileId":"+15550000003","reason":${deep(levels)}}`;
    const statusFields = (levels: number) => ({ status: 'fail', storeId: DEMO_STORE_ID, messageId: '5a1f0c9e8b3d4e00dd000002', Details: details(levels) });
    const attempts: [string, string, RequestInit][] = [
      ['body', inboundReceiver, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: inboundBody }],
      ['body', inboundReceiver, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: withId }],
      ['body', inboundReceiver, { method: 'POST', body: Buffer.from(inboundBody) }],
      ['body', inboundReceiver, { method: 'POST', body: Buffer.from(withId) }],
      ['body', inboundReceiver, { method: 'POST', headers: { 'content-type': 'application/json' }, body: inboundBody }],
      ['Details', statusReceiver, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(statusFields(20_000)) }],
      ['Details', statusReceiver, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(statusFields(20_000)) }],
      // Each bracket is three bytes once urlencoded: 10,000 levels fit the 64 KiB limit.
      ['Details', statusReceiver, { method: 'POST', body: new URLSearchParams(statusFields(10_000)) }],
      ['Details', statusReceiver, { method: 'POST', body: form(statusFields(20_000)) }],
      // Not deep enough to hurt, but deeper than the bound: refused the same way.
      ['Details', statusReceiver, { method: 'POST', body: form(statusFields(33)) }],
    ];
    const answers = [];
    for (const [what, url, init] of attempts) {
      const response = await fetch(url, init);
      answers.push({ what, status: response.status, body: await response.json() });
    }
    expect(answers).toEqual(attempts.map(([what]) => ({ what, status: 400, body: refusal(what) })));

    // Still healthy; brackets in a text field are text, and 32 levels in Details are read.
    expect((await fetch(`${m.subgraphOrigin}/health`)).status).toBe(200);
    const accepted = await fetch(inboundReceiver, { method: 'POST', body: form({ storeId: DEMO_STORE_ID, from: '+15550000003', messageBody: '['.repeat(5000), messageId: '5a1f0c9e8b3d4e00dd000003' }) });
    expect(accepted.status).toBe(202);
    const within = `{"mobileId":"+15550000003","reason":"locked","extra":${deep(31)}}`;
    expect((await fetch(statusReceiver, { method: 'POST', body: form({ ...statusFields(0), messageId: '5a1f0c9e8b3d4e00dd000004', Details: within }) })).status).toBe(202);
    // The first event each subscriber gets is the one accepted after the refusals.
    expect((await inbound.waitFor(1))[0]).toEqual({ data: { inboundMessageReceived: { messageId: '5a1f0c9e8b3d4e00dd000003', body: '['.repeat(5000) } } });
    expect((await status.waitFor(1))[0]).toEqual({ data: { subscriberStatusChanged: { messageId: '5a1f0c9e8b3d4e00dd000004', reason: 'locked' } } });
  });

  it('reads a field that is an object where text belongs as absent, never failing on it', async () => {
    const poisoned = { toString: 1 };
    const noStore = await fetch(inboundReceiver, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ storeId: poisoned, from: '+15550000003' }) });
    expect(noStore.status).toBe(400);
    const inDetails = await fetch(statusReceiver, {
      method: 'POST',
      body: form({ status: 'fail', Details: JSON.stringify({ storeId: DEMO_STORE_ID, reason: [poisoned], mobileId: poisoned }) }),
    });
    expect(inDetails.status).toBe(202);
  });
});

describe('the event log in bytes', () => {
  it('replays only what RECOGNITION_EVENT_LOG_MAX_BYTES holds: 40 deliveries of 60 KB, 1 MiB kept', async () => {
    const live = await subscribe('subscription { bonusCreated { cursor bonus { id } } }');
    const padding = 'p'.repeat(60 * 1024);
    for (let index = 0; index < 40; index += 1) expect((await post(delivery(`bon_big_${index}`, { reason: padding }))).status).toBe(202);
    const events = (await live.waitFor(40)).map((result) => result.data!.bonusCreated as { cursor: string; bonus: { id: string } });

    const replay = await subscribe('subscription ($after: String) { bonusCreated(after: $after) { bonus { id } } }', { after: events[0]!.cursor });
    // A live event after the replay marks where the replay ended.
    expect((await post(delivery('bon_after_replay'))).status).toBe(202);
    const replayed = (await waitForId(replay, 'bon_after_replay')).map((result) => (result.data!.bonusCreated as { bonus: { id: string } }).bonus.id);
    // At most 1 MiB of 60 KB events: 17 or fewer, the newest of the 40.
    const held = replayed.slice(0, -1);
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThanOrEqual(17);
    expect(held).toEqual(events.slice(-held.length).map((event) => event.bonus.id));
  });

  it('bounds the in-memory log and its remembered entities by bytes, keeping the newest', async () => {
    const log = createMemoryLog({ capacity: 1000, maxBytes: 100_000 });
    const payload = (index: number) => ({ index, text: 'e'.repeat(10_000) });
    for (let index = 0; index < 50; index += 1) {
      await log.append({ dedupeKey: `k${index}`, type: 't', occurredAt: '2026-11-22T10:00:00.000Z', payload: payload(index), entities: [{ kind: 'E', id: String(index), value: payload(index) }] });
    }
    const held = await log.readAfter(undefined, 1000);
    expect(held.length).toBeLessThanOrEqual(Math.floor(100_000 / jsonBytes(payload(0))));
    expect(held.at(-1)!.payload).toEqual(payload(49));
    expect(await log.findEntity('E', '49')).toEqual(payload(49));
    expect(await log.findEntity('E', '0')).toBeUndefined();
    // One event larger than the bound still stays, as the newest.
    await log.append({ dedupeKey: 'huge', type: 't', occurredAt: '2026-11-22T10:00:00.000Z', payload: 'h'.repeat(200_000) });
    expect((await log.readAfter(undefined, 1000)).map((event) => event.dedupeKey)).toEqual(['huge']);
  });

  it('bounds the Redis stream by bytes, counting what it holds', async () => {
    const redis = await startRedis();
    // Registered in the test, for the test: an afterAll here is never run, and the server outlived the suite.
    onTestFinished(() => redis.close());
    const log = await createRedisLog({ url: redis.url, prefix: 'hardening', maxLength: 1000, maxBytes: 100_000 });
    const inspect = new Redis(redis.url);
    try {
      for (let index = 0; index < 50; index += 1) {
        await log.append({ dedupeKey: `k${index}`, type: 't', occurredAt: '2026-11-22T10:00:00.000Z', payload: { index, text: 'e'.repeat(10_000) } });
      }
      const entries = (await inspect.xrange('hardening:events', '-', '+')) as [string, string[]][];
      const bytes = entries.reduce((sum, [, fields]) => sum + Buffer.byteLength(fields[1]!), 0);
      expect(entries.length).toBeLessThanOrEqual(9);
      expect(bytes).toBeLessThanOrEqual(100_000);
      expect(Number(await inspect.get('hardening:events:bytes'))).toBe(bytes);
      expect((JSON.parse(entries.at(-1)![1][1]!) as { payload: { index: number } }).payload.index).toBe(49);
    } finally {
      inspect.disconnect();
      await log.close();
    }
  });
});

/** Every result up to and including the one whose bonus has `id`. */
async function waitForId(subscription: Collected, id: string) {
  for (let count = 1; ; count += 1) {
    const results = await subscription.waitFor(count);
    if ((results.at(-1)!.data!.bonusCreated as { bonus: { id: string } }).bonus.id === id) return results;
  }
}
