import http from 'node:http';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OTHER_STORE_ID, SECOND_STORE_ID, SEEDED_NUMBERS } from '../../emulators/messaging/data.ts';
import { listen } from '../../lib/http.ts';
import { knownSecrets } from '../support/logs.ts';
import { DEMO_STORE_ID, member, messagingOf } from '../support/messagingPieces.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeSse, subscribeWs, type Collected } from '../support/subscribers.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const SECRET = 'messaging-callback-secret-7d2e4f';
knownSecrets.add(SECRET);
const t = await startTestStack({ MESSAGING_CALLBACK_SECRET: SECRET, MESSAGING_CALLBACK_MAX_BYTES: '2048', MESSAGING_EMULATOR_RETRY_MS: '20' });
const m = messagingOf(t);
const inboundReceiver = `${m.subgraphOrigin}/callbacks/messaging/inbound/${SECRET}`;
const statusReceiver = `${m.subgraphOrigin}/callbacks/messaging/status/${SECRET}`;
const open: Collected[] = [];

/** The content type of each callback the second store's relay passed on, by receiver (`/inbound` or `/status`). */
const relayed: { path: string; contentType: string }[] = [];
/** Stands between the emulator and the subgraph's receivers, so a test sees how the emulator encoded each callback. */
const relay = await listen(
  http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      const contentType = String(req.headers['content-type']);
      relayed.push({ path, contentType });
      fetch(path === '/status' ? statusReceiver : inboundReceiver, { method: 'POST', headers: { 'content-type': contentType }, body: Buffer.concat(chunks) })
        .then(async (answer) => res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(await answer.text()))
        .catch(() => res.writeHead(502).end());
    });
  }),
  0,
);
afterAll(() => relay.close());
// The stack points the demo store at the subgraph; the second store is pointed here, through the relay, as an operator would in its settings.
await m.emulator.control(`stores/${SECOND_STORE_ID}/callbacks`, { inboundCallbackURL: `${relay.url}/inbound`, messageStatusURL: `${relay.url}/status` });

beforeEach(async () => {
  await m.emulator.reset();
});
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(m.subgraphUrl, 0, 'messaging_event_subscriptions');
});

const ws = (query: string, variables: Record<string, unknown> = {}, connectionParams: Record<string, string> = member) => {
  const subscription = subscribeWs(t.graphqlUrl, query, { variables, connectionParams });
  open.push(subscription);
  return subscription;
};
const sse = (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = member) => {
  const subscription = subscribeSse(t.graphqlUrl, query, { variables, headers });
  open.push(subscription);
  return subscription;
};
const following = (count: number) => waitForEventSubscriptions(m.subgraphUrl, count, 'messaging_event_subscriptions');

const INBOUND = `subscription($filter: InboundMessageFilter!, $after: String) {
  inboundMessageReceived(filter: $filter, after: $after) { id occurredAt cursor messageId from body keyword keywordType subscriberStatus store { name } }
}`;
const STATUS = `subscription($filter: SubscriberStatusFilter!) {
  subscriberStatusChanged(filter: $filter) { id occurredAt succeeded message messageId storeId mobileId subscriberStatus reason subscriber { status shortCode } store { name } }
}`;

function multipart(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}
const inboundFields = (messageId: string, extra: Record<string, string> = {}) => ({
  storeId: DEMO_STORE_ID,
  from: '+15557770042',
  messageBody: 'bread',
  messageId,
  keyword: 'BREAD',
  keywordId: '5a1f0c9e8b3d4e0012a7e001',
  keywordType: 'opt-in',
  subscriberStatus: 'Opted-In',
  received: '11/22/2026 18:04:05',
  ...extra,
});
const eventOf = (result: { data?: Record<string, unknown> | null } | undefined, field: string) => result!.data![field] as Record<string, unknown>;

describe('messaging callbacks as subscriptions', () => {
  it('a handset YES reaches subscriberStatusChanged over graphql-ws and over SSE', async () => {
    const overWs = ws(STATUS, { filter: { storeId: DEMO_STORE_ID, mobileId: SEEDED_NUMBERS.pending } });
    const overSse = sse(STATUS, { filter: { storeId: DEMO_STORE_ID, mobileId: `+${SEEDED_NUMBERS.pending}` } });
    await following(2);
    await m.text(SEEDED_NUMBERS.pending, 'YES');
    for (const subscription of [overWs, overSse]) {
      const [result] = await subscription.waitFor(1);
      expect(result!.errors).toBeUndefined();
      expect(eventOf(result, 'subscriberStatusChanged')).toEqual({
        id: expect.stringMatching(/^message\.status:/),
        occurredAt: expect.stringMatching(/Z$/),
        succeeded: true,
        message: 'Subscriber confirmed the double opt-in',
        messageId: expect.any(String),
        storeId: DEMO_STORE_ID,
        mobileId: SEEDED_NUMBERS.pending,
        subscriberStatus: 'OPTED_IN',
        reason: null,
        subscriber: { status: 'OPTED_IN', shortCode: '33733' },
        store: { name: 'Corner Bakery' },
      });
    }
  });

  it('an inbound keyword text reaches inboundMessageReceived, its filters honoured', async () => {
    const byKeyword = ws(INBOUND, { filter: { storeId: DEMO_STORE_ID, keyword: 'bread' } });
    const bySender = ws(INBOUND, { filter: { storeId: DEMO_STORE_ID, from: '+1 555 777 0002' } });
    const wholeStore = sse(INBOUND, { filter: { storeId: DEMO_STORE_ID } });
    const otherStore = ws(INBOUND, { filter: { storeId: SECOND_STORE_ID } });
    await following(4);
    await m.text('15557770001', 'HOURS');
    await m.text('15557770002', 'Bread');
    await m.text('15557770003', 'CATER');
    const [hours, bread] = await wholeStore.waitFor(2);
    expect(eventOf(hours, 'inboundMessageReceived')).toMatchObject({ from: '15557770001', body: 'HOURS', keyword: 'HOURS', keywordType: 'RESPONDER' });
    expect(eventOf(bread, 'inboundMessageReceived')).toMatchObject({
      from: '15557770002',
      body: 'Bread',
      keyword: 'BREAD',
      keywordType: 'OPT_IN',
      subscriberStatus: 'OPTED_IN',
      store: { name: 'Corner Bakery' },
      occurredAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/),
    });
    // Each filtered subscriber's first event is the one it asked for: the others never reached it.
    for (const subscription of [byKeyword, bySender]) expect(eventOf((await subscription.waitFor(1))[0], 'inboundMessageReceived')).toMatchObject({ from: '15557770002', keyword: 'BREAD' });
    expect(eventOf((await otherStore.waitFor(1))[0], 'inboundMessageReceived')).toMatchObject({ from: '15557770003', keyword: 'CATER' });
    await m.text('15557770002', 'BREAD');
    for (const subscription of [byKeyword, bySender]) expect((await subscription.waitFor(2)).map((result) => eventOf(result, 'inboundMessageReceived').keyword)).toEqual(['BREAD', 'BREAD']);
  });

  it('a redelivered callback reaches nobody twice', async () => {
    const subscription = ws(INBOUND, { filter: { storeId: DEMO_STORE_ID } });
    await following(1);
    const first = await fetch(inboundReceiver, { method: 'POST', body: multipart(inboundFields('5a1f0c9e8b3d4e00aa000001')) });
    const again = await fetch(inboundReceiver, { method: 'POST', body: multipart(inboundFields('5a1f0c9e8b3d4e00aa000001')) });
    expect([first.status, await first.json()]).toEqual([202, { accepted: true }]);
    expect([again.status, await again.json()]).toEqual([200, { accepted: true, duplicate: true }]);
    await fetch(inboundReceiver, { method: 'POST', body: multipart(inboundFields('5a1f0c9e8b3d4e00aa000002', { messageBody: 'bread again' })) });
    const [one, two] = await subscription.waitFor(2);
    expect(eventOf(one, 'inboundMessageReceived')).toMatchObject({ id: 'message.inbound:5a1f0c9e8b3d4e00aa000001', body: 'bread', occurredAt: '2026-11-22T18:04:05.000Z', from: '15557770042' });
    expect(eventOf(two, 'inboundMessageReceived')).toMatchObject({ id: 'message.inbound:5a1f0c9e8b3d4e00aa000002', body: 'bread again' });
  });

  it('a refused single opt-in arrives as a status event, not as an error of the mutation', async () => {
    const subscription = ws(STATUS, { filter: { storeId: DEMO_STORE_ID, mobileId: SEEDED_NUMBERS.optedOut } });
    await following(1);
    const sent = await m.gql<{ sendOptIn: { messageId: string } }>('mutation($s: ID!, $n: String!) { sendOptIn(input: { storeId: $s, mobileId: $n, type: SINGLE }) { messageId } }', { s: DEMO_STORE_ID, n: SEEDED_NUMBERS.optedOut });
    expect(sent.errors).toBeUndefined();
    const [result] = await subscription.waitFor(1);
    expect(eventOf(result, 'subscriberStatusChanged')).toMatchObject({
      succeeded: false,
      messageId: sent.data!.sendOptIn.messageId,
      mobileId: SEEDED_NUMBERS.optedOut,
      subscriberStatus: 'OPTED_OUT',
      reason: 'double-opt-in-required',
      message: 'Double opt-in is required for this subscriber',
    });
  });

  it.each([
    ['multipart', 'multipart/form-data; boundary='],
    ['urlencoded', 'application/x-www-form-urlencoded'],
    ['json', 'application/json'],
  ] as const)('accepts callbacks sent as %s', async (callbacks, contentType) => {
    await m.emulator.control('variants', { callbacks });
    relayed.length = 0;
    const subscription = ws(INBOUND, { filter: { storeId: SECOND_STORE_ID } });
    await following(1);
    await m.text('15557770005', 'CATER');
    expect(eventOf((await subscription.waitFor(1))[0], 'inboundMessageReceived')).toMatchObject({ from: '15557770005', keyword: 'CATER', store: { name: 'Corner Bakery Catering' } });
    // The event came from a callback encoded as asked: the emulator's default (multipart) would pass the lines above too.
    expect(relayed.filter((entry) => entry.path === '/inbound').map((entry) => entry.contentType)).toEqual([expect.stringMatching(new RegExp(`^${contentType}`))]);
  });

  it('resumes after a cursor: what came after it, then live, nothing twice', async () => {
    const first = ws(INBOUND, { filter: { storeId: DEMO_STORE_ID } });
    await following(1);
    await m.text('15557770001', 'BREAD');
    await m.text('15557770002', 'BREAD');
    const [one] = await first.waitFor(2);
    const resumed = sse(INBOUND, { filter: { storeId: DEMO_STORE_ID }, after: eventOf(one, 'inboundMessageReceived').cursor });
    // It may join the stream the first holds (sent what it missed first) or open its own.
    await resumed.waitFor(1);
    await m.text('15557770003', 'BREAD');
    expect((await resumed.waitFor(2)).map((result) => eventOf(result, 'inboundMessageReceived').from)).toEqual(['15557770002', '15557770003']);
  });

  it('refuses a store the credential cannot read, a bad filter, and a missing credential before anything streams', async () => {
    const elsewhere = ws(INBOUND, { filter: { storeId: OTHER_STORE_ID } });
    const badKeyword = ws(INBOUND, { filter: { storeId: DEMO_STORE_ID, keyword: 'x' } });
    const badNumber = sse(STATUS, { filter: { storeId: DEMO_STORE_ID, mobileId: 'call me' } });
    const anonymous = ws(INBOUND, { filter: { storeId: DEMO_STORE_ID } }, {});
    expect((await elsewhere.waitFor(1))[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.storeId' });
    expect((await badKeyword.waitFor(1))[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.keyword' });
    expect((await badNumber.waitFor(1))[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.mobileId' });
    expect((await anonymous.waitFor(1))[0]!.errors![0]!.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a store id that is a dot segment before any call, naming filter.storeId', async () => {
    await m.emulator.clearRequests();
    const inbound = ws(INBOUND, { filter: { storeId: '..' } });
    const status = sse(STATUS, { filter: { storeId: '.' } });
    expect((await inbound.waitFor(1))[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.storeId' });
    expect((await status.waitFor(1))[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.storeId' });
    expect(await m.emulator.requests()).toEqual([]);
  });
});

describe('the callback receiver', () => {
  it('refuses a wrong or missing secret with 401, storing nothing', async () => {
    for (const url of [`${m.subgraphOrigin}/callbacks/messaging/inbound/not-the-secret`, `${m.subgraphOrigin}/callbacks/messaging/status`]) {
      const response = await fetch(url, { method: 'POST', body: multipart(inboundFields('5a1f0c9e8b3d4e00aa000003')) });
      expect(response.status).toBe(401);
    }
  });

  it('refuses a body over the limit with 413 before reading it all', async () => {
    const response = await fetch(inboundReceiver, { method: 'POST', body: multipart(inboundFields('5a1f0c9e8b3d4e00aa000004', { messageBody: 'x'.repeat(4096) })) });
    expect(response.status).toBe(413);
  });

  it('refuses a callback without its store or sender, or a body it cannot read, with 400', async () => {
    const noStore = await fetch(inboundReceiver, { method: 'POST', body: multipart({ from: '+15557770042', messageBody: 'hi' }) });
    const noStatus = await fetch(statusReceiver, { method: 'POST', body: multipart({ storeId: DEMO_STORE_ID }) });
    const garbage = await fetch(statusReceiver, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    const brokenMultipart = await fetch(statusReceiver, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'no boundary' });
    expect([noStore.status, noStatus.status, garbage.status, brokenMultipart.status]).toEqual([400, 400, 400, 400]);
  });

  it('keeps Details that are not JSON out of the event instead of refusing it', async () => {
    const subscription = ws(STATUS, { filter: { storeId: DEMO_STORE_ID } });
    await following(1);
    const response = await fetch(statusReceiver, {
      method: 'POST',
      body: multipart({ status: 'fail', message: 'Carrier rejected', messageId: '5a1f0c9e8b3d4e00aa000005', storeId: DEMO_STORE_ID, subscriberStatus: 'Opted-In', Details: '{broken', mobileId: '+15557770042' }),
    });
    expect(response.status).toBe(202);
    expect(eventOf((await subscription.waitFor(1))[0], 'subscriberStatusChanged')).toMatchObject({ succeeded: false, message: 'Carrier rejected', mobileId: '15557770042', reason: null });
  });
});
