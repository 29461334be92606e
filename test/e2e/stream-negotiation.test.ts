import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startTestStack } from '../support/stack.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

/**
 * Which answer an `Accept` gets on `/graphql` (QA16 finding 1): an event stream only when the client
 * accepts it (q > 0) and ranks it above the JSON types; else Apollo Server's plain HTTP answer.
 */
const t = await startTestStack();
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services[0]!.subgraphUrl;
const member = { 'x-recognition-token': DEMO_TOKENS.member };
/** What urql 6 sends for every query and mutation. */
const URQL_QUERY_ACCEPT = 'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';
/** What urql 6 sends for a subscription. */
const URQL_SUBSCRIPTION_ACCEPT = 'text/event-stream, multipart/mixed';
const REWARD = '{ reward(id: "rw_coffee_5") { name } }';
const opened: AbortController[] = [];

afterEach(async () => {
  for (const controller of opened.splice(0)) controller.abort();
  await waitForEventSubscriptions(subgraphUrl, 0);
});

const post = (query: string, accept: string) => {
  const controller = new AbortController();
  opened.push(controller);
  return fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept, ...member }, body: JSON.stringify({ query }), signal: controller.signal });
};
const rewardCalls = async () => (await emulator.requests()).filter((request) => request.path.startsWith('/api/v1/rewards/')).length;

describe('a query or mutation whose client prefers JSON', () => {
  it('gets the plain HTTP answer, never an event stream, whatever else the Accept lists', async () => {
    for (const [accept, type] of [
      ['application/json, text/event-stream;q=0', 'application/json; charset=utf-8'],
      ['application/json;q=1, text/event-stream;q=0.1', 'application/json; charset=utf-8'],
      ['text/event-stream;q=0.5, application/json', 'application/json; charset=utf-8'],
      [URQL_QUERY_ACCEPT, 'application/graphql-response+json; charset=utf-8'],
      ['*/*', 'application/json; charset=utf-8'],
    ] as const) {
      await emulator.clearRequests();
      const response = await post(REWARD, accept);
      expect([response.status, response.headers.get('content-type')], accept).toEqual([200, type]);
      expect(await response.json()).toEqual({ data: { reward: { name: expect.any(String) } } });
      expect(await rewardCalls(), accept).toBe(1);
    }
  });

  it('gets its validation error as Apollo Server words it: HTTP 400 with its code, in the type the client prefers', async () => {
    await emulator.clearRequests();
    const urql = await post('{ nope }', URQL_QUERY_ACCEPT);
    expect([urql.status, urql.headers.get('content-type')]).toEqual([400, 'application/graphql-response+json; charset=utf-8']);
    expect(await urql.json()).toMatchObject({ errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
    const refused = await post('{ nope }', 'application/json, text/event-stream;q=0');
    expect([refused.status, refused.headers.get('content-type')]).toEqual([400, 'application/json; charset=utf-8']);
    expect(await refused.json()).toMatchObject({ errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
    expect(await emulator.requests()).toEqual([]);
  });
});

describe('an event stream', () => {
  it('answers a query from a client that ranks text/event-stream first, as graphql-sse sends it', async () => {
    for (const accept of ['text/event-stream', 'text/event-stream, application/json', 'application/json;q=0.9, text/event-stream', 'TEXT/EVENT-STREAM']) {
      await emulator.clearRequests();
      const response = await post(REWARD, accept);
      expect([response.status, response.headers.get('content-type')], accept).toEqual([200, 'text/event-stream; charset=utf-8']);
      expect(await response.text()).toMatch(/event: next\ndata: \{"data":\{"reward":\{"name":".+"\}\}\}\n\n/);
      expect(await rewardCalls(), accept).toBe(1);
    }
  });

  it('answers a subscription from urql, which ranks text/event-stream first for subscriptions', async () => {
    const response = await post('subscription { bonusCreated { bonus { id } } }', URQL_SUBSCRIPTION_ACCEPT);
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    await waitForEventSubscriptions(subgraphUrl, 1);
  });

  it('is not opened for a subscription whose client prefers JSON or refuses the stream types: 406 naming the transports', async () => {
    for (const accept of [
      'application/json, text/event-stream',
      'application/json, text/event-stream;q=0',
      'application/json, multipart/mixed;subscriptionSpec=1.0;q=0',
      'multipart/mixed;subscriptionSpec="1.0";q=0, text/event-stream;q=0, application/json',
    ]) {
      const response = await post('subscription { bonusCreated { bonus { id } } }', accept);
      expect([response.status, response.headers.get('content-type')], accept).toEqual([406, 'application/json; charset=utf-8']);
      expect(await response.json()).toEqual({ errors: [{ message: expect.stringContaining('Accept: text/event-stream'), extensions: { code: 'BAD_REQUEST' } }] });
    }
    await waitForEventSubscriptions(subgraphUrl, 0);
  });
});
