import { afterEach, describe, expect, it } from 'vitest';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client/core/index.js';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startGatewayOver, startTestStack } from '../support/stack.ts';
import { subscribeMultipart, type MultipartCollected } from '../support/subscribers.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const t = await startTestStack();
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services[0]!.subgraphUrl;
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const ACCEPT = 'multipart/mixed;subscriptionSpec="1.0", application/json';
/** What Apollo Client 4's HttpLink sends for a subscription. */
const APOLLO_CLIENT_4_ACCEPT = 'multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9';
const GRAPHQL_RESPONSE = 'application/graphql-response+json; charset=utf-8';
const open: MultipartCollected[] = [];

afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(subgraphUrl, 0);
});

const multipart = (query: string, options: Parameters<typeof subscribeMultipart>[2] = {}) => {
  const subscription = subscribeMultipart(t.graphqlUrl, query, { headers: member, ...options });
  open.push(subscription);
  return subscription;
};
const giveBonus = (bonus: { hashtag?: string; receiver_ids?: string[] } = {}) => emulator.control('bonuses', bonus) as Promise<{ bonus: { id: string } }>;
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...member, ...headers }, body: JSON.stringify(body) });

describe('subscriptions over multipart HTTP (Apollo Router protocol)', () => {
  it('streams events to Apollo Client over its HttpLink, with no WebSocket, and lets the upstream go when it unsubscribes', async () => {
    const client = new ApolloClient({ link: new HttpLink({ uri: t.graphqlUrl, headers: member }), cache: new InMemoryCache() });
    const received: unknown[] = [];
    const failures: unknown[] = [];
    const subscription = client
      .subscribe({ query: gql`subscription Feed($tag: String) { bonusCreated(filter: { hashtag: $tag }) { bonus { id hashtag } } }`, variables: { tag: '#apollo' } })
      .subscribe({ next: (result) => received.push(result.data), error: (error) => failures.push(error) });
    await waitForEventSubscriptions(subgraphUrl, 1);
    await giveBonus({ hashtag: 'other' });
    const { bonus } = await giveBonus({ hashtag: 'apollo' });
    await expect.poll(() => received, { timeout: 8000 }).toHaveLength(1);
    expect(received).toEqual([{ bonusCreated: { __typename: 'BonusEvent', bonus: { __typename: 'Bonus', id: bonus.id, hashtag: '#apollo' } } }]);
    expect(failures).toEqual([]);
    subscription.unsubscribe();
    await waitForEventSubscriptions(subgraphUrl, 0);
  });

  it('ends with a transport error Apollo Client reports as a protocol error when the gateway drains', async () => {
    const gateway = await startGatewayOver(t.stack, {}, 'multipart-drain');
    const client = new ApolloClient({ link: new HttpLink({ uri: gateway.graphqlUrl, headers: member }), cache: new InMemoryCache() });
    const failures: { protocolErrors?: readonly { message: string; extensions?: Record<string, unknown> }[] }[] = [];
    let completed = false;
    client.subscribe({ query: gql`subscription { bonusCreated { cursor } }` }).subscribe({ error: (error) => failures.push(error as (typeof failures)[number]), complete: () => (completed = true) });
    await waitForEventSubscriptions(subgraphUrl, 1);
    await gateway.drain({ delayMs: 0, graceMs: 1000 });
    await expect.poll(() => failures).toHaveLength(1);
    expect(failures[0]!.protocolErrors).toEqual([{ message: expect.stringContaining('the gateway is restarting'), extensions: { code: 'UPSTREAM_UNAVAILABLE' } }]);
    expect(completed).toBe(false);
  });

  it('lets a draining gateway finish a query sent with the multipart Accept, as any other', async () => {
    const gateway = await startGatewayOver(t.stack, {}, 'multipart-query-drain');
    await emulator.fault({ path: '/api/v1/rewards/*', latencyMs: 1500, times: 1 });
    await emulator.clearRequests();
    const answered = fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...member }, body: JSON.stringify({ query: '{ reward(id: "rw_coffee_5") { name } }' }) });
    await expect.poll(async () => (await emulator.requests()).some((request) => request.path.startsWith('/api/v1/rewards/'))).toBe(true);
    const drained = gateway.drain({ delayMs: 0, graceMs: 10_000 });
    const response = await answered;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { reward: { name: expect.any(String) } } });
    await drained;
  });

  it('answers with the protocol type, a heartbeat at once and every 5 s, and each event as a part of its own', async () => {
    const subscription = multipart('subscription { bonusCreated { bonus { id } } }');
    const response = await subscription.response;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    expect(response.headers.get('cache-control')).toBe('no-store');
    await expect.poll(() => subscription.heartbeats()).toBe(1);
    await waitForEventSubscriptions(subgraphUrl, 1);
    const first = await giveBonus();
    const second = await giveBonus();
    expect(await subscription.waitFor(2)).toEqual([{ data: { bonusCreated: { bonus: { id: first.bonus.id } } } }, { data: { bonusCreated: { bonus: { id: second.bonus.id } } } }]);
    await expect.poll(() => subscription.heartbeats(), { timeout: 8000, interval: 250 }).toBe(2);
  }, 15_000);

  it('ends a subscription refused at its start after one part carrying the errors, on the closing boundary', async () => {
    const subscription = multipart('subscription { bonusCreated { id } }', { headers: {} });
    const [result] = await subscription.waitFor(1);
    expect(result!.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await subscription.ended;
    expect(subscription.closedCleanly()).toBe(true);
    expect(subscription.fatal()).toBeUndefined();
  });

  it('refuses a malformed or invalid operation with HTTP 400 and its code, before anything streams', async () => {
    const cases: [unknown, string][] = [
      [{ query: 'subscription { bonusCreated { nope } }' }, 'GRAPHQL_VALIDATION_FAILED'],
      [{ query: 'subscription {' }, 'GRAPHQL_PARSE_FAILED'],
      [{ query: 'subscription { bonusCreated { id } }', variables: [1] }, 'BAD_REQUEST'],
      [{ query: 'subscription A { bonusCreated { id } }', operationName: 'B' }, 'OPERATION_RESOLUTION_FAILURE'],
    ];
    for (const [body, code] of cases) {
      const response = await post(body, { accept: ACCEPT });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ errors: [{ extensions: { code } }] });
    }
    const tooLarge = await post({ query: `subscription { bonusCreated { id } } #${'x'.repeat(1024 * 1024)}` }, { accept: ACCEPT });
    expect(tooLarge.status).toBe(413);
    const put = await fetch(t.graphqlUrl, { method: 'PUT', headers: { 'content-type': 'application/json', accept: ACCEPT, ...member }, body: '{}' });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, POST']);
    expect(await put.json()).toEqual({ errors: [{ message: 'GraphQL over multipart HTTP takes a GET or a POST', extensions: { code: 'BAD_REQUEST' } }] });
    const simple = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'text/plain', accept: ACCEPT, ...member }, body: '{"query":"subscription { bonusCreated { id } }"}' });
    expect(simple.status).toBe(400);
    expect(await simple.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('refuses in application/graphql-response+json when the client accepts it, so that Apollo Client 4 reads the errors and their codes', async () => {
    await emulator.clearRequests();
    const cases: [unknown, string][] = [
      [{ query: 'subscription { bonusCreated { nope } }' }, 'GRAPHQL_VALIDATION_FAILED'],
      [{ query: 'subscription {' }, 'GRAPHQL_PARSE_FAILED'],
      [{ query: 'subscription ($d: Date) { bonusCreated(filter: { hashtag: $d }) { id } }', variables: { d: 'x' } }, 'GRAPHQL_VALIDATION_FAILED'],
      [{ query: 'subscription ($tag: String!) { bonusCreated(filter: { hashtag: $tag }) { id } }', variables: { tag: { not: 'a string' } } }, 'BAD_USER_INPUT'],
      [{ query: 'subscription { bonusCreated { id } }', variables: [1] }, 'BAD_REQUEST'],
      [{ query: 'subscription A { bonusCreated { id } }', operationName: 'B' }, 'OPERATION_RESOLUTION_FAILURE'],
      [[{ query: 'subscription { bonusCreated { id } }' }], 'BAD_REQUEST'],
    ];
    for (const [body, code] of cases) {
      for (const [accept, type] of [
        [APOLLO_CLIENT_4_ACCEPT, GRAPHQL_RESPONSE],
        ['multipart/mixed;subscriptionSpec=1.0, application/graphql-response+json;q=0.5, application/json', 'application/json; charset=utf-8'],
        [ACCEPT, 'application/json; charset=utf-8'],
        ['multipart/mixed;subscriptionSpec=1.0', 'application/json; charset=utf-8'],
      ]) {
        const response = await post(body, { accept: accept! });
        expect([response.status, response.headers.get('content-type')], `${JSON.stringify(body)} ${accept}`).toEqual([400, type]);
        expect(await response.json()).toMatchObject({ errors: [{ extensions: { code } }] });
      }
    }
    const badJson = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: APOLLO_CLIENT_4_ACCEPT, ...member }, body: '{"query":' });
    expect([badJson.status, badJson.headers.get('content-type')]).toEqual([400, GRAPHQL_RESPONSE]);
    const tooLarge = await post({ query: `subscription { bonusCreated { id } } #${'x'.repeat(1024 * 1024)}` }, { accept: APOLLO_CLIENT_4_ACCEPT });
    expect([tooLarge.status, tooLarge.headers.get('content-type'), tooLarge.headers.get('connection')]).toEqual([413, GRAPHQL_RESPONSE, 'close']);
    expect(await tooLarge.json()).toEqual({ errors: [{ message: 'request body exceeds 1048576 bytes', extensions: { code: 'BAD_REQUEST' } }] });
    const simple = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'text/plain', accept: APOLLO_CLIENT_4_ACCEPT, ...member }, body: '{"query":"subscription { bonusCreated { id } }"}' });
    expect([simple.status, simple.headers.get('content-type')]).toEqual([400, GRAPHQL_RESPONSE]);
    const put = await fetch(t.graphqlUrl, { method: 'PUT', headers: { 'content-type': 'application/json', accept: APOLLO_CLIENT_4_ACCEPT, ...member }, body: '{}' });
    expect([put.status, put.headers.get('content-type')]).toEqual([405, GRAPHQL_RESPONSE]);
    const unknownId = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }, { accept: APOLLO_CLIENT_4_ACCEPT });
    expect([unknownId.status, unknownId.headers.get('content-type')]).toEqual([404, GRAPHQL_RESPONSE]);
    expect(await unknownId.json()).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
    expect(await emulator.requests()).toEqual([]);
  });

  it('is not opened for a client that refuses it (q=0): the subscription is refused as over plain HTTP', async () => {
    const response = await post({ query: 'subscription { bonusCreated { id } }' }, { accept: 'application/json, multipart/mixed;subscriptionSpec=1.0;q=0' });
    expect([response.status, response.headers.get('content-type')]).toEqual([406, 'application/json; charset=utf-8']);
    expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    await waitForEventSubscriptions(subgraphUrl, 0);
  });

  it('answers a query asked this way as over plain HTTP', async () => {
    const response = await post({ query: '{ reward(id: "rw_coffee_5") { name } }' }, { accept: ACCEPT });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ data: { reward: { name: expect.any(String) } } });
    const badVariable = await post({ query: 'query ($d: Date) { leaderboard(direction: GIVEN, startDate: $d) { count } }', variables: { d: 'yesterday' } }, { accept: ACCEPT });
    expect(badVariable.status).toBe(400);
    expect(await badVariable.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
  });
});

describe('a subscription over plain HTTP', () => {
  it('is refused with 406 and the transports that serve it, not a 500', async () => {
    const response = await post({ query: 'subscription { bonusCreated { id } }' });
    expect(response.status).toBe(406);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors).toEqual([{ message: expect.stringContaining('multipart/mixed;subscriptionSpec=1.0'), extensions: { code: 'BAD_REQUEST' } }]);
    // Over GET, Apollo Server refuses it first, as any operation but a query.
    const overGet = await fetch(`${t.graphqlUrl}?query=${encodeURIComponent('subscription { bonusCreated { id } }')}`, { headers: { ...member, 'apollo-require-preflight': 'true' } });
    expect(overGet.status).toBe(405);
    expect(await overGet.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
  });
});
