import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import type { StartedGateway } from '../../gateway/server.ts';
import { FAST_PATH_MODES, startGatewayOverStandIn, type GatewayOverStandIn } from '../support/standInSubgraph.ts';

describe.each(FAST_PATH_MODES)('the gateway calling a subgraph ($mode)', ({ fastPaths }) => {
  let stand: GatewayOverStandIn;
  let gateway: StartedGateway;

  beforeAll(async () => {
    stand = await startGatewayOverStandIn('data-source', fastPaths);
    gateway = stand.gateway;
  });
  afterAll(() => stand.close());

  async function query(text: string, variables?: Record<string, unknown>) {
    const response = await fetch(gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, 'x-dashboards-token': 'dashboards-secret-0f9e8d7c' },
      body: JSON.stringify({ query: text, variables }),
    });
    return { status: response.status, headers: response.headers, result: (await response.json()) as { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] } };
  }

    it('posts the operation as JSON with only that service’s credential', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[{"id":"wh_1","url":"https://example.test/hook"}]}}' };
      stand.received.length = 0;
      const { result } = await query('{ webhooks { id url } }');
      expect(result).toEqual({ data: { webhooks: [{ id: 'wh_1', url: 'https://example.test/hook' }] } });
      expect(stand.received).toHaveLength(1);
      expect(stand.received[0]!.headers['content-type']).toBe('application/json');
      expect(stand.received[0]!.headers['x-recognition-token']).toBe(DEMO_TOKENS.member);
      expect(stand.received[0]!.headers['x-dashboards-token']).toBeUndefined();
      expect(stand.received[0]!.body).toMatchObject({ query: expect.stringContaining('webhooks') });
    });

    it('keeps the subgraph’s typed errors when it refuses with a non-2xx status', async () => {
      stand.answer = { status: 400, body: '{"errors":[{"message":"ids: at most 100","extensions":{"code":"BAD_USER_INPUT","argument":"ids"}}]}' };
      const { result } = await query('{ webhooks { id } }');
      expect(result.errors?.[0]).toMatchObject({ message: 'ids: at most 100', extensions: { code: 'BAD_USER_INPUT', argument: 'ids' } });
    });

    it('reports a non-2xx answer without GraphQL errors, or a body that is not GraphQL, as UPSTREAM_ERROR', async () => {
      stand.answer = { status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } };
      const failed = await query('{ webhooks { id } }');
      expect(failed.result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 502 });

      stand.answer = { status: 200, body: 'maintenance', headers: { 'content-type': 'text/plain' } };
      const garbled = await query('{ webhooks { id } }');
      expect(garbled.result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 200 });
    });

    it('returns a one-subgraph answer as the subgraph sent it with the single-fetch shortcut, shaped by Apollo without', async () => {
    stand.answer = { status: 200, body: '{"data":{"webhooks":[{"id":"wh_1","url":"https://example.test/hook"}]}}' };
    const { result } = await query('{ webhooks { id } }');
    // The subgraph answered more than it was asked: only Apollo's reshaping drops it.
    expect(result).toEqual({ data: { webhooks: [fastPaths.singleFetch ? { id: 'wh_1', url: 'https://example.test/hook' } : { id: 'wh_1' }] } });
  });

  it('carries the subgraph’s cache policy into the gateway’s answer', async () => {
      stand.answer = { status: 200, body: '{"data":{"webhooks":[]}}', headers: { 'cache-control': 'max-age=60, private' } };
      const cached = await query('{ webhooks { id } }');
      expect(cached.headers.get('cache-control')).toBe('max-age=60, private');

      stand.answer = { status: 200, body: '{"data":{"webhooks":[]}}' };
      const uncached = await query('{ webhooks { id } }');
      expect(uncached.headers.get('cache-control')).not.toMatch(/max-age=[1-9]/);
    });
});

describe.each(FAST_PATH_MODES)('a subgraph answer over MAX_SUBGRAPH_RESPONSE_BYTES ($mode)', ({ fastPaths }) => {
  const CAP = 64 * 1024;
  let stand: GatewayOverStandIn;

  beforeAll(async () => {
    stand = await startGatewayOverStandIn('data-source-cap', fastPaths, { maxSubgraphResponseBytes: CAP });
  });
  afterAll(() => stand.close());

  const webhooks = (count: number) => JSON.stringify({ data: { webhooks: Array.from({ length: count }, (_, index) => ({ id: `wh_${index}`, url: 'https://example.test/hook' })) } });

  async function query() {
    const response = await fetch(stand.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member },
      body: JSON.stringify({ query: '{ webhooks { id url } }' }),
    });
    return (await response.json()) as { data?: { webhooks?: unknown[] } | null; errors?: { message: string; extensions: Record<string, unknown> }[] };
  }

  it('is cut off as UPSTREAM_ERROR, whether its length is declared or only counted; one under the cap comes whole', async () => {
    const under = webhooks(600);
    expect(under.length).toBeLessThan(CAP);
    stand.answer = { status: 200, body: under };
    expect((await query()).data?.webhooks).toHaveLength(600);

    const over = webhooks(2000);
    expect(over.length).toBeGreaterThan(CAP);
    for (const headers of [{}, { 'transfer-encoding': 'chunked' }] as Record<string, string>[]) {
      stand.answer = { status: 200, body: over, headers };
      const result = await query();
      expect(result.errors?.[0]).toMatchObject({ message: `the recognition subgraph answered more than ${CAP} bytes`, extensions: { code: 'UPSTREAM_ERROR', service: 'recognition' } });
    }
    // The gateway goes on serving.
    stand.answer = { status: 200, body: under };
    expect((await query()).data?.webhooks).toHaveLength(600);
  });
});

describe('a subgraph that trickles its answer, never idle long enough for an idle timeout', () => {
  let stand: GatewayOverStandIn;

  beforeAll(async () => {
    stand = await startGatewayOverStandIn('data-source-trickle', FAST_PATH_MODES[0]!.fastPaths, { subgraphTimeoutMs: 500 });
  });
  afterAll(() => stand.close());

  it('is given up at SUBGRAPH_TIMEOUT_MS for the whole answer, as UPSTREAM_UNAVAILABLE', async () => {
    // 200 bytes at one every 50 ms would take 10 s.
    const body = JSON.stringify({ data: { webhooks: [{ id: 'wh_1', url: `https://example.test/${'a'.repeat(140)}` }] } });
    stand.answer = { status: 200, body, trickleMs: 50 };
    const begun = performance.now();
    const response = await fetch(stand.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member },
      body: JSON.stringify({ query: '{ webhooks { id url } }' }),
    });
    const result = (await response.json()) as { errors?: { extensions: Record<string, unknown> }[] };
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
    expect(performance.now() - begun).toBeLessThan(5000);
  });
});
