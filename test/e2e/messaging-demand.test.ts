import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT_ID, SEEDED_NUMBERS } from '../../emulators/messaging/data.ts';
import { DEMO_STORE_ID, member, messagingOf } from '../support/messagingPieces.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';
import { subscribeWs, type Collected } from '../support/subscribers.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

/**
 * QA pass 14, finding 2: the messaging schema declared no costs, so an operation nesting a store's
 * subscribers under each subscriber's store was estimated at one call and accepted, then made
 * hundreds of calls, nearly all the same page of the same store. Its costs are declared now, and
 * its reads go through the request's loaders: the same read asked twice is one call.
 */
// No credential check while a subscription streams: its store read would blur the per-event count.
const t = await startTestStack({ MESSAGING_CREDENTIAL_CHECK_TTL_MS: '600000' });
const m = messagingOf(t);
const open: Collected[] = [];

beforeEach(async () => {
  await m.emulator.reset();
});
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(m.subgraphUrl, 0, 'messaging_event_subscriptions');
});

/** What reached the service, in the order it arrived, the control surface left out. */
const upstream = async () => (await m.emulator.requests()).filter((request) => !request.path.startsWith('/__emulator/')).map((request) => `${request.method} ${request.path}`);

async function post(query: string, variables?: Record<string, unknown>): Promise<{ status: number; result: GraphQLResult }> {
  const response = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...member }, body: JSON.stringify({ query, variables }) });
  return { status: response.status, result: (await response.json()) as GraphQLResult };
}

const STORE_DETAIL = `GET /account/store/detail/${DEMO_STORE_ID}`;
const page = (number: number) => `GET /subscriber/bystore/${DEMO_STORE_ID}/${number}`;

describe('messaging: demand control', () => {
  it("refuses the report's nested operation before any upstream call", async () => {
    const { status, result } = await post(
      `query($id: ID!) { store(id: $id) { subscribers(first: 100) { edges { node { store { subscribers(first: 100) {
        edges { node { store { subscribers(first: 100) { totalCount } } } } } } } } } } }`,
      { id: DEMO_STORE_ID },
    );
    expect(status).toBe(400);
    expect(result.data).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'OPERATION_TOO_EXPENSIVE', budget: 1000 });
    expect(result.errors![0]!.extensions!.estimate).toBeGreaterThan(1000);
    expect(await upstream()).toEqual([]);
  });

  it('refuses a page of subscribers per store of an account, before any call, when first makes it too dear', async () => {
    const { status, result } = await post(
      `query($id: ID!) { account(id: $id) { stores { subscribers(first: 100) { edges { node { store { subscribers(first: 100) { totalCount } } } } } } } }`,
      { id: DEMO_ACCOUNT_ID },
    );
    expect(status).toBe(400);
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'OPERATION_TOO_EXPENSIVE' });
    expect(await upstream()).toEqual([]);
  });

  it('runs the documented examples, each under the budget', async () => {
    const stores = await post(
      `query($s: ID!, $a: ID!) {
        store(id: $s) {
          name inboundCallbackUrl templates { confirmation }
          keywords { keyword type responderContent }
          subscribers(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { node { mobileId status } } }
        }
        account(id: $a) { name stores { name automation { confirmation alreadyOptedIn } } users { email } }
      }`,
      { s: DEMO_STORE_ID, a: DEMO_ACCOUNT_ID },
    );
    expect(stores.status).toBe(200);
    expect(stores.result.errors).toBeUndefined();
    const numbers = await post(`query($s: ID!) {
      subscriber(storeId: $s, mobileId: "+1 555 000 0001") { status shortCode optInAttempts }
      mobileNumber(mobileId: "15550000001") { optIns { storeName status } }
    }`, { s: DEMO_STORE_ID });
    expect(numbers.status).toBe(200);
    expect(numbers.result.errors).toBeUndefined();
  });
});

describe('messaging: one call per distinct read within an operation', () => {
  it("reads a store's page of subscribers once, however many parents ask for it", async () => {
    const result = await m.gql<{ store: { subscribers: { edges: { node: { mobileId: string; store: { id: string; subscribers: { totalCount: number; edges: unknown[] } } } }[] } } }>(
      `query($id: ID!) { store(id: $id) { subscribers(first: 3) { edges { node { mobileId store { id subscribers(first: 2) { totalCount edges { node { mobileId } } } } } } } } }`,
      { id: DEMO_STORE_ID },
    );
    expect(result.errors).toBeUndefined();
    const edges = result.data!.store.subscribers.edges;
    expect(edges).toHaveLength(3);
    for (const { node } of edges) expect(node.store).toMatchObject({ id: DEMO_STORE_ID, subscribers: { totalCount: 210, edges: [expect.anything(), expect.anything()] } });
    // The store once, its first page once: not a page and a store per subscriber.
    expect((await upstream()).sort()).toEqual([STORE_DETAIL, page(1)].sort());
  });

  it('keys each page by store and number: windows sharing a page share its call, another page is its own', async () => {
    const first = await m.gql<{ store: { subscribers: { pageInfo: { endCursor: string } } } }>('query($id: ID!) { store(id: $id) { subscribers(first: 50) { pageInfo { endCursor } } } }', { id: DEMO_STORE_ID });
    const after = first.data!.store.subscribers.pageInfo.endCursor;
    await m.emulator.clearRequests();
    const result = await m.gql<{ a: { subscribers: { edges: unknown[] } }; b: { subscribers: { edges: unknown[] } }; c: { subscribers: { totalCount: number } } }>(
      `query($id: ID!, $after: String) {
        a: store(id: $id) { subscribers(first: 100) { edges { cursor } } }
        b: store(id: $id) { subscribers(first: 100, after: $after) { edges { cursor } } }
        c: store(id: $id) { subscribers(first: 10) { totalCount } }
      }`,
      { id: DEMO_STORE_ID, after },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.a.subscribers.edges).toHaveLength(100);
    expect(result.data!.b.subscribers.edges).toHaveLength(100);
    expect(result.data!.c.subscribers.totalCount).toBe(210);
    // `b`'s window (items 51 to 150) spans pages 1 and 2; page 1 is the one `a` and `c` read too.
    expect((await upstream()).sort()).toEqual([STORE_DETAIL, page(1), page(2)].sort());
  });

  it('reads an account and a mobile number once each, however many aliases ask', async () => {
    const result = await m.gql(
      `query($a: ID!) {
        one: account(id: $a) { name } two: account(id: $a) { id stores { id } }
        x: mobileNumber(mobileId: "15550000001") { mobileId } y: mobileNumber(mobileId: "+1 555 000 0001") { optIns { storeName } }
      }`,
      { a: DEMO_ACCOUNT_ID },
    );
    expect(result.errors).toBeUndefined();
    expect((await upstream()).sort()).toEqual([`GET /account/details/${DEMO_ACCOUNT_ID}`, `GET /subscriber/status/${SEEDED_NUMBERS.optedIn}`].sort());
  });

  it("shares a store read between a number's opt-ins and the store asked by id", async () => {
    const result = await m.gql<{ mobileNumber: { optIns: { store: { name: string; subscribers: { totalCount: number } } }[] } }>(
      `query($s: ID!) {
        store(id: $s) { subscribers(first: 100) { totalCount } }
        mobileNumber(mobileId: "15550000001") { optIns { store { name subscribers(first: 1) { totalCount } } } }
      }`,
      { s: DEMO_STORE_ID },
    );
    expect(result.errors).toBeUndefined();
    const optIns = result.data!.mobileNumber.optIns;
    expect(optIns.map((optIn) => optIn.store.name)).toContain('Corner Bakery');
    const calls = await upstream();
    expect(calls.filter((call) => call === STORE_DETAIL)).toHaveLength(1);
    expect(calls.filter((call) => call === page(1))).toHaveLength(1);
  });

  it('keeps nothing from one request for the next: each operation reads the service again', async () => {
    const query = 'query($id: ID!) { store(id: $id) { subscribers(first: 1) { totalCount } } }';
    expect((await m.gql(query, { id: DEMO_STORE_ID })).errors).toBeUndefined();
    expect((await m.gql(query, { id: DEMO_STORE_ID })).errors).toBeUndefined();
    expect((await upstream()).sort()).toEqual([STORE_DETAIL, STORE_DETAIL, page(1), page(1)].sort());
  });
});

describe('messaging: one call per distinct read within an event', () => {
  it("shares the reads of one event's fields, and reads the service again for the next event", async () => {
    const subscription = subscribeWs(
      t.graphqlUrl,
      `subscription($filter: InboundMessageFilter!) { inboundMessageReceived(filter: $filter) {
        body store { name subscribers(first: 1) { totalCount } }
        subscriber { status store { name subscribers(first: 1) { totalCount } } }
      } }`,
      { variables: { filter: { storeId: DEMO_STORE_ID } }, connectionParams: member },
    );
    open.push(subscription);
    await waitForEventSubscriptions(m.subgraphUrl, 1, 'messaging_event_subscriptions');
    await m.emulator.clearRequests();

    const handset = '+15557770099';
    const subscriber = `GET /subscriber/statusbystore/${DEMO_STORE_ID}/${handset.slice(1)}`;
    await m.text(handset, 'BREAD');
    const [first] = await subscription.waitFor(1);
    const store = { name: 'Corner Bakery', subscribers: { totalCount: 211 } };
    expect(first).toEqual({ data: { inboundMessageReceived: { body: 'BREAD', store, subscriber: { status: 'OPTED_IN', store } } } });
    expect((await upstream()).sort()).toEqual([STORE_DETAIL, page(1), subscriber].sort());

    await m.emulator.clearRequests();
    await m.text(handset, 'STOP');
    const [, second] = await subscription.waitFor(2);
    // Read after this event, not remembered from the last one.
    expect(second).toEqual({ data: { inboundMessageReceived: { body: 'STOP', store, subscriber: { status: 'OPTED_OUT', store } } } });
    expect((await upstream()).sort()).toEqual([STORE_DETAIL, page(1), subscriber].sort());
  });
});
