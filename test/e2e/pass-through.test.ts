import { parse, print } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DATA_ONLY_HEADER } from '../../lib/dataOnlyAnswers.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import type { StartedGateway } from '../../gateway/server.ts';
import { FAST_PATH_MODES, startGatewayOverStandIn, type GatewayOverStandIn } from '../support/standInSubgraph.ts';
import { scrapeMetrics } from '../support/metrics.ts';

/**
 * The gateway's pass-through, against a stand-in recognition subgraph whose answers each test
 * sets: which repeats skip Apollo Server, and that the others are reported as Apollo reports them
 * with the subgraph called once per request. In every mode of the fast-path settings, a repeat is
 * answered exactly as the first request; only with both on does it skip Apollo Server.
 */
describe.each(FAST_PATH_MODES)('the gateway’s pass-through ($mode)', ({ fastPaths }) => {
  /** How many of `count` repeats skip Apollo Server in this mode. */
  const skipping = (count: number) => (fastPaths.singleFetch && fastPaths.passThrough ? count : 0);
  let stand: GatewayOverStandIn;
  let gateway: StartedGateway;

  beforeAll(async () => {
    stand = await startGatewayOverStandIn('pass-through', fastPaths);
    gateway = stand.gateway;
  });
  afterAll(() => stand.close());
  beforeEach(() => {
    stand.received.length = 0;
  });

  /** Requests the stand-in subgraph received since the test began (or since it last emptied them). */
  const calls = () => stand.received.length;

  async function post(body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, contentType: response.headers.get('content-type'), cacheControl: response.headers.get('cache-control'), text: await response.text() };
  }

  async function passedThrough(): Promise<number> {
    const text = await scrapeMetrics(`${gateway.url}/metrics`);
    return Number(/^gateway_operations_passed_through_total\{type="query"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  }

  /** Sends the same request twice: the first always goes through Apollo Server, the second may not. */
  async function twice(body: unknown, headers: Record<string, string> = {}) {
    const before = await passedThrough();
    const first = await post(body, headers);
    const second = await post(body, headers);
    return { first, second, passedThrough: (await passedThrough()) - before };
  }

    it('answers a repeat with the subgraph’s own bytes, exactly what Apollo Server answered the first time', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[{"id":"wh_1","url":"https://example.test/é"}]}}\n' };
      const { first, second, passedThrough: count } = await twice({ query: 'query Hooks { webhooks { id url } }', operationName: 'Hooks' });
      expect(second).toEqual(first);
      expect(JSON.parse(second.text)).toEqual({ data: { webhooks: [{ id: 'wh_1', url: 'https://example.test/é' }] } });
      expect(second).toMatchObject({ status: 200, contentType: 'application/json; charset=utf-8', cacheControl: 'no-store' });
      expect(count).toBe(skipping(1));
      expect(calls()).toBe(2);
    });

    it('passes Apollo Client’s requests through: `__typename` last, asked in the client’s order, `extensions.clientLibrary` sent', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[{"id":"wh_1","url":"https://example.test/hook","__typename":"Webhook"}]}}\n' };
      // Apollo Client 4.3.8's body, as it sends it.
      const body = { operationName: 'Hooks', variables: {}, extensions: { clientLibrary: { name: '@apollo/client', version: '4.3.8' } }, query: 'query Hooks {\n  webhooks {\n    id\n    url\n    __typename\n  }\n}' };
      const { first, second, passedThrough: count } = await twice(body);
      expect(second).toEqual(first);
      expect(second.text).toBe('{"data":{"webhooks":[{"id":"wh_1","url":"https://example.test/hook","__typename":"Webhook"}]}}\n');
      expect(count).toBe(skipping(1));
      expect(calls()).toBe(2);
      // The planner moves `__typename` first; the shortcut asks in the client's order, which the answer's keys follow.
      const asked = stand.received.map(({ body }) => print(parse((body as { query: string }).query)).replace(/\s+/g, ' '));
      for (const query of asked) expect(query).toContain(fastPaths.singleFetch ? 'webhooks { id url __typename }' : 'webhooks { __typename id url }');
    });

    it('answers in the media type the client prefers, as Apollo Server does', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[]}}\n' };
      const accept = { accept: 'application/graphql-response+json, application/json;q=0.9' };
      const { first, second, passedThrough: count } = await twice({ query: '{ webhooks { id } }' }, accept);
      expect(second).toEqual(first);
      expect(second.contentType).toBe('application/graphql-response+json; charset=utf-8');
      expect(count).toBe(skipping(1));

      const refused = await twice({ query: '{ webhooks { id } }' }, { accept: 'text/html' });
      expect(refused.second).toEqual(refused.first);
      expect(refused.second.status).toBe(406);
      expect(refused.passedThrough).toBe(0);
    });

    it('hands an answer with errors to Apollo Server, which formats it without calling the subgraph again', async () => {
      stand.answer = { status: 200, body: '{"errors":[{"message":"recognition: I\'m a teapot","path":["teapot"],"extensions":{"code":"TEAPOT","service":"recognition","status":418}}],"data":{"teapot":null}}' };
      const { first, second, passedThrough: count } = await twice({ query: '{ teapot }' });
      expect(second).toEqual(first);
      expect(JSON.parse(second.text)).toEqual({
        errors: [{ message: "recognition: I'm a teapot", path: ['teapot'], extensions: { code: 'TEAPOT', service: 'recognition', status: 418, serviceName: 'recognition' } }],
        data: { teapot: null },
      });
      expect(count).toBe(0);
      expect(calls()).toBe(2);
    });

    it('passes on, unsearched, an answer its subgraph marks as nothing but data; searches the others for extensions', async () => {
      stand.answer = { status: 200, body: '{"data":{"extensions":[{"id":"wh_1"}]}}\n', headers: { [DATA_ONLY_HEADER]: '1' } };
      const marked = await twice({ query: '{ extensions: webhooks { id } }' });
      expect(marked.second).toEqual(marked.first);
      expect(JSON.parse(marked.second.text)).toEqual({ data: { extensions: [{ id: 'wh_1' }] } });
      expect(marked.passedThrough).toBe(skipping(1));

      // Unmarked, the alias is enough to send it through Apollo Server, which answers the same.
      stand.answer = { status: 200, body: '{"data":{"extensions":[{"id":"wh_1","url":"https://example.test/hook"}]}}\n' };
      const unmarked = await twice({ query: '{ extensions: webhooks { id url } }' });
      expect(unmarked.second).toEqual(unmarked.first);
      expect(unmarked.passedThrough).toBe(0);
    });

    it('does not pass on a subgraph’s extensions or cache hint', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[]},"extensions":{"debug":"internal"}}' };
      const extended = await twice({ query: '{ webhooks { url } }' });
      expect(JSON.parse(extended.second.text)).toEqual({ data: { webhooks: [] } });
      expect(extended.passedThrough).toBe(0);

      stand.answer = { status: 200, body: '{"data":{"webhooks":[]}}', headers: { 'cache-control': 'max-age=60, private' } };
      const hinted = await twice({ query: '{ webhooks { url id } }' });
      expect(hinted.second).toEqual(hinted.first);
      expect(hinted.second.cacheControl).toBe('max-age=60, private');
      expect(hinted.passedThrough).toBe(0);
      expect(calls()).toBe(4);
    });

    it('reports a subgraph failure on a repeat as the first time: unreachable, HTTP 500, not GraphQL', async () => {
      for (const failure of [
        { status: 500, body: '' },
        { status: 200, body: 'maintenance' },
        { status: 200, body: '{"data":{"webhooks":[]' },
      ]) {
        stand.answer = failure;
        stand.received.length = 0;
        const { first, second, passedThrough: count } = await twice({ query: '{ webhooks { id url } }' });
        expect(second).toEqual(first);
        expect(JSON.parse(second.text).errors[0].extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition' });
        expect(count).toBe(0);
        expect(calls()).toBe(2);
      }
    });

    it('checks a repeat’s variables as Apollo Server does, before any call', async () => {
      stand.answer = { status: 200, body: '{"data":{"reward":null}}' };
      const query = 'query ($id: ID!) { reward(id: $id) { id } }';
      await post({ query, variables: { id: 'rw_1' } });
      stand.received.length = 0;
      const missing = await twice({ query, variables: {} });
      expect(missing.second).toEqual(missing.first);
      expect(missing.second.status).toBe(400);
      expect(JSON.parse(missing.second.text).errors[0].extensions.code).toBe('BAD_USER_INPUT');
      const wrongType = await twice({ query, variables: { id: { nested: true } } });
      expect(wrongType.second).toEqual(wrongType.first);
      expect(wrongType.second.status).toBe(400);
      expect(calls()).toBe(0);
    });

    it('does not remember an operation padded past 16 KiB: its repeats go through Apollo Server', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[]}}' };
      const padded = await twice({ query: `{ webhooks { id } }\n# ${'x'.repeat(16 * 1024)}` });
      expect(padded.second).toEqual(padded.first);
      expect(padded.passedThrough).toBe(0);
      expect(calls()).toBe(2);
    });

    it('leaves requests it does not know the shape of to Apollo Server', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[]}}' };
      const query = '{ webhooks { id } }';
      await post({ query });
      // Apollo Server reads nothing from `clientLibrary`, but others may change how it runs the request.
      const withExtensions = await twice({ query, extensions: { clientLibrary: { name: '@apollo/client' }, somethingElse: true } });
      const badExtensions = await twice({ query, extensions: 'clientLibrary' });
      const badVariables = await twice({ query, variables: 'not an object' });
      expect(withExtensions.passedThrough + badExtensions.passedThrough + badVariables.passedThrough).toBe(0);
      expect(badExtensions.second).toEqual(badExtensions.first);
      expect(badExtensions.second.status).toBe(400);
      expect(badVariables.second.status).toBe(400);
    });
});
