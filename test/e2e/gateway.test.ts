import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeWs } from '../support/subscribers.ts';

const t = await startTestStack();
const emulator = t.emulator('recognition');
const limited = await startTestStack({ MAX_QUERY_DEPTH: '4', MAX_QUERY_FIELDS: '20', SANDBOX: 'off' });

describe('the gateway', () => {
  it('forwards each credential only to its own service, and no other caller header', async () => {
    await emulator.clearRequests();
    const result = await t.gql('{ apiKeys { id } }', {
      headers: {
        'x-recognition-token': DEMO_TOKENS.member,
        'x-dashboards-token': 'dashboards-secret-0f9e8d7c',
        'x-marketplace-api-key': 'marketplace-secret-1a2b3c4d',
        authorization: 'Bearer gateway-session-5e6f7a8b',
        cookie: 'session=abc',
      },
    });
    expect(result.errors).toBeUndefined();
    const [call] = await emulator.requests();
    expect(call!.headers.sort()).toEqual(['accept', 'connection', 'host']);
    expect(call!.query).toEqual({ access_token: '[REDACTED]' });
  });

  it('answers a one-subgraph operation exactly as Apollo’s reshaping would, errors included', async () => {
    const headers = { 'x-recognition-token': DEMO_TOKENS.member };
    const selection = `teapot
      redemption(id: "rd_001") { id state reward { id name } }
      missing: redemption(id: "rd_999") { id }
      leaderboard { count user { id customProperties { name value } } }`;
    // A directive makes Apollo plan and reshape the same operation the usual way.
    const direct = await t.gql(`{ ${selection} }`, { headers });
    const reshaped = await t.gql(`query ($yes: Boolean = true) { ${selection.replace('teapot', 'teapot @include(if: $yes)')} }`, { headers });
    expect(direct.errors?.[0]?.extensions).toMatchObject({ code: 'TEAPOT', serviceName: 'recognition' });
    expect(direct).toEqual(reshaped);
  });

  it('answers /health, and /ready with each subgraph’s state', async () => {
    const health = await fetch(`${t.stack.gateway.url}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${t.stack.gateway.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, supergraphLoaded: true, subgraphs: { recognition: 'up', dashboards: 'up' } });
  });

  it('serves Apollo Sandbox on GET /graphql with the demo headers preset', async () => {
    const page = await fetch(t.graphqlUrl, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('EmbeddedSandbox');
    expect(html).toContain('x-recognition-token');
    expect(html).toContain('x-dashboards-token');
  });

  it('with Sandbox off, tells a browser so on GET /graphql, and still runs a GET operation', async () => {
    const page = await fetch(limited.graphqlUrl, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    expect(((await page.json()) as { message: string }).message).toContain('Sandbox is off');
    const run = await fetch(`${limited.graphqlUrl}?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json', 'apollo-require-preflight': 'true' } });
    expect(await run.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('exposes Prometheus metrics', async () => {
    await t.gql('{ __typename }');
    const metrics = await (await fetch(`${t.stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/gateway_operations_total\{type="query",outcome="ok"\} \d+/);
  });

  it('refuses a body over the limit and a body that is not JSON, with typed errors', async () => {
    const huge = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ __typename } #${'x'.repeat(2 * 1024 * 1024)}` }) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    const broken = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('refuses an operation nested too deep or selecting too much, before planning, on every transport', async () => {
    const nested = `{ rewardCatalog { rewards { denominations { reward { description { text } } } } } }`;
    expect((await t.gql(nested, { headers: { 'x-recognition-token': DEMO_TOKENS.member } })).errors).toBeUndefined();
    await limited.emulator('recognition').clearRequests();
    const tooDeep = await limited.gql(nested, { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    expect(tooDeep.errors?.[0]).toMatchObject({ message: 'the operation nests 6 levels deep; at most 4 are allowed', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const wide = `{ ${Array.from({ length: 21 }, (_, index) => `a${index}: teapot`).join(' ')} }`;
    expect((await limited.gql(wide)).errors?.[0]?.message).toBe('the operation selects more than 20 fields');
    // Under the field limit, but past graphql-js's budget for checking that same-named fields merge.
    const repeated = await t.gql(`{ dashboardStats { ${Array.from({ length: 800 }, () => '__typename').join(' ')} } }`);
    expect(repeated.errors?.[0]).toMatchObject({ message: expect.stringContaining('repeats fields of one name too often'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const overWs = subscribeWs(limited.graphqlUrl, 'subscription { bonusCreated { bonus { giver { customProperties { name } } } } }', { connectionParams: { 'x-recognition-token': DEMO_TOKENS.member } });
    try {
      // graphql-ws reports validation failures as an `error` message that ends the subscription.
      expect(await overWs.ended).toEqual([expect.objectContaining({ message: 'the operation nests 5 levels deep; at most 4 are allowed', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })]);
      expect(overWs.results).toEqual([]);
    } finally {
      overWs.close();
    }
    expect(await limited.emulator('recognition').requests()).toEqual([]);
  });

  it('answers an unknown field with a validation error and no upstream call', async () => {
    await emulator.clearRequests();
    const result = await t.gql('{ rewardCatalogue { name } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await emulator.requests()).toEqual([]);
  });

  it('reports an unreachable subgraph as UPSTREAM_UNAVAILABLE, without a stack', async () => {
    const { startGateway } = await import('../../gateway/server.ts');
    const { readGatewayConfig } = await import('../../gateway/config.ts');
    const { testLogger } = await import('../support/logs.ts');
    const lonely = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: 'http://127.0.0.1:9/graphql' } }), testLogger('lonely'));
    try {
      const response = await fetch(lonely.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member }, body: JSON.stringify({ query: '{ webhooks { id } }' }) });
      const result = (await response.json()) as { errors: { extensions: Record<string, unknown> }[] };
      expect(result.errors[0]!.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
      expect(JSON.stringify(result)).not.toContain('stacktrace');
      const ready = await fetch(`${lonely.url}/ready`);
      expect(ready.status).toBe(503);
    } finally {
      await lonely.close();
    }
  });
});
