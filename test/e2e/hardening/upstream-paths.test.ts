import http from 'node:http';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../../../lib/http.ts';
import { DEMO_TOKEN as DASHBOARDS_TOKEN } from '../../../emulators/dashboards/data.ts';
import { DEMO_CREDENTIALS } from '../../../emulators/marketplace/data.ts';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { createRestTransport } from '../../../subgraphs/kit/transport.ts';
import { MAX_SEGMENT_CHARS } from '../../../subgraphs/kit/paths.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * Issue 14, item 7: a caller's value is one path segment, never a step in the path. `.` and `..`
 * (and an empty value) are refused naming the argument, before any upstream call; anything else,
 * `%2e%2e` included, arrives upstream as one encoded segment.
 */
const t = await startTestStack();
const emulators = ['recognition', 'marketplace', 'dashboards'].map((service) => t.emulator(service));
const headers = {
  'x-recognition-token': DEMO_TOKENS.member,
  'x-dashboards-token': DASHBOARDS_TOKEN,
  'x-marketplace-email': DEMO_CREDENTIALS.email,
  'x-marketplace-api-key': DEMO_CREDENTIALS.apiKey,
  'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey,
};

beforeEach(async () => {
  await Promise.all(emulators.map((emulator) => emulator.reset()));
});

const upstreamCalls = async () => (await Promise.all(emulators.map((emulator) => emulator.requests()))).flat().map((request) => `${request.method} ${request.path}`);

describe('ids that would change the upstream path', () => {
  const cases: [string, string, string][] = [
    ['reward', '{ reward(id: $v) { id } }', 'id'],
    ['redemption', '{ redemption(id: $v) { id } }', 'id'],
    ['deleteWebhook', 'mutation { deleteWebhook(id: $v) { id } }', 'id'],
    ['widgets', '{ widgets(dashboardId: $v) { totalCount } }', 'dashboardId'],
    ['widget', '{ widget(dashboardId: "api-health", id: $v) { id } }', 'id'],
    ['dashboard by slug', '{ dashboard(slug: $v) { id } }', 'slug'],
    ['environment by id', '{ environment(id: $v) { id } }', 'id'],
    ['variation', '{ variation(sku: $v) { sku } }', 'sku'],
    ['question', '{ question(id: $v) { id } }', 'id'],
    ['product', '{ product(sku: $v) { sku } }', 'sku'],
  ];

  for (const [name, selection, argument] of cases) {
    it(`refuses "." and ".." for ${name} as BAD_USER_INPUT naming \`${argument}\`, with no upstream call`, async () => {
      const operation = selection.startsWith('mutation') ? selection.replace('mutation {', 'mutation ($v: ID!) {') : `query ($v: ${argument === 'sku' || argument === 'slug' ? 'String' : 'ID'}!) ${selection}`;
      for (const value of ['..', '.', ' .. ']) {
        const result = await t.gql(operation, { headers, variables: { v: value } });
        expect(result.errors, `${name} ${JSON.stringify(value)}`).toHaveLength(1);
        expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
      }
      expect(await upstreamCalls()).toEqual([]);
    });

    it(`refuses a value over ${MAX_SEGMENT_CHARS} characters for ${name} as BAD_USER_INPUT naming \`${argument}\`, with no upstream call`, async () => {
      const operation = selection.startsWith('mutation') ? selection.replace('mutation {', 'mutation ($v: ID!) {') : `query ($v: ${argument === 'sku' || argument === 'slug' ? 'String' : 'ID'}!) ${selection}`;
      // 20,000 characters came back from the emulator as its 431, an UPSTREAM_ERROR blamed on the service.
      const result = await t.gql(operation, { headers, variables: { v: 'x'.repeat(20_000) } });
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
      expect(await upstreamCalls()).toEqual([]);
    });
  }

  it(`sends a value of ${MAX_SEGMENT_CHARS} characters`, async () => {
    const result = await t.gql('query ($v: ID!) { reward(id: $v) { id } }', { headers, variables: { v: 'x'.repeat(MAX_SEGMENT_CHARS) } });
    expect(result).toEqual({ data: { reward: null } });
    expect(await upstreamCalls()).toEqual([`GET /api/v1/rewards/${'x'.repeat(MAX_SEGMENT_CHARS)}`]);
  });

  it('sends an encoded dot or any other text as one segment of the path', async () => {
    const result = await t.gql('query ($v: ID!) { reward(id: $v) { id } }', { headers, variables: { v: '%2e%2e' } });
    expect(result).toEqual({ data: { reward: null } });
    const widgets = await t.gql('query ($v: ID!) { widgets(dashboardId: $v) { totalCount } }', { headers, variables: { v: '../x' } });
    expect(widgets).toEqual({ data: { widgets: null } });
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards/%252e%252e', 'GET /dashboards/..%2Fx/widgets']);
  });
});

const seen: string[] = [];
const stub = await listen(
  http.createServer((req, res) => {
    seen.push(req.url!);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }),
  0,
);
const transport = createRestTransport({ service: 'stub', baseUrl: `${stub.url}/api` });
afterAll(async () => {
  await transport.close();
  await stub.close();
});

describe('the transport, behind every client', () => {
  it('refuses a path with a dot segment, however it was written, without calling', async () => {
    for (const path of ['/rewards/..', '/rewards/../x', '/./rewards', '/rewards/%2E%2e', '/rewards/.%2e?x=1']) {
      await expect(transport.request({ operation: 'forged', method: 'GET', path }), path).rejects.toThrow(/dot segment/);
    }
    expect(seen).toEqual([]);
    await transport.request({ operation: 'fine', method: 'GET', path: '/rewards/...', query: { q: '../..' } });
    expect(seen).toEqual(['/api/rewards/...?q=..%2F..']);
  });

  it('refuses a request target over 8,000 characters as BAD_USER_INPUT without calling, and never shows it', async () => {
    seen.length = 0;
    const secret = 'k'.repeat(40);
    const refused = await transport.request({ operation: 'long', method: 'GET', path: '/rewards', query: { apikey: secret, q: 'x'.repeat(8000) }, secrets: [secret] }).then(
      () => undefined,
      (error: unknown) => error as { message: string; extensions: Record<string, unknown> },
    );
    expect(refused?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', service: 'stub' });
    expect(refused?.message).not.toContain(secret);
    expect(refused?.message).not.toContain('xxxx');
    expect(seen).toEqual([]);
    await transport.request({ operation: 'long', method: 'GET', path: '/rewards', query: { q: 'x'.repeat(7000) } });
    expect(seen).toHaveLength(1);
  });
});
