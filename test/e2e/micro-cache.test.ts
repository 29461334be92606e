import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { ConfigError } from '../../lib/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { testLogger } from '../support/logs.ts';
import { scrapeMetrics } from '../support/metrics.ts';
import { startTestStack } from '../support/stack.ts';

const t = await startTestStack();
let now = 1_000_000;
// The stack's subgraphs and emulators behind a gateway whose micro-cache runs on a clock the tests move.
async function startMicroCacheGateway(env: Record<string, string>, logName: string) {
  const started = await startGateway(
    readGatewayConfig(
      { GATEWAY_MICRO_CACHE: 'Query.rewardCatalog:2000,Query.leaderboard:500', ...env },
      { port: 0, subgraphUrls: Object.fromEntries(t.stack.services.map((service) => [service.name, service.subgraphUrl])), now: () => now },
    ),
    testLogger(logName),
  );
  afterAll(() => started.close());
  return started;
}
const gateway = await startMicroCacheGateway({}, 'micro-cache-gateway');
// Reads not shared in flight reach the micro-cache by a path of their own.
const undeduped = await startMicroCacheGateway({ GATEWAY_DEDUPE_READS: 'off' }, 'micro-cache-undeduped-gateway');
const recognition = t.emulator('recognition');

async function gql(query: string, token: string = DEMO_TOKENS.member, url = gateway.graphqlUrl) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-recognition-token': token }, body: JSON.stringify({ query }) });
  return (await response.json()) as { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] };
}
const upstreamCalls = async () => (await recognition.requests()).filter((request) => !request.path.startsWith('/__emulator')).map((request) => `${request.method} ${request.path}`);
async function metric(name: string): Promise<number> {
  const text = await scrapeMetrics(gateway.graphqlUrl.replace(/\/graphql$/, '/metrics'));
  const value = new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1];
  if (value === undefined) throw new Error(`${name} is not in /metrics`);
  return Number(value);
}

const CATALOG = '{ rewardCatalog { name rewards { name } } }';

beforeEach(async () => {
  await recognition.clearRequests();
  // Past every time to live: each test starts with nothing kept.
  now += 3_600_000;
});

describe('the micro-cache of opted-in reads (GATEWAY_MICRO_CACHE)', () => {
  it('answers a second identical read within the time to live without an upstream call, and the same data', async () => {
    const [hitsBefore, missesBefore] = [await metric('gateway_micro_cache_hits_total'), await metric('gateway_micro_cache_misses_total')];
    const first = await gql(CATALOG);
    now += 1999;
    const second = await gql(CATALOG);
    expect(first.errors).toBeUndefined();
    expect((first.data?.rewardCatalog as unknown[]).length).toBeGreaterThan(0);
    expect(second).toEqual(first);
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards']);
    expect(await metric('gateway_micro_cache_hits_total')).toBe(hitsBefore + 1);
    expect(await metric('gateway_micro_cache_misses_total')).toBe(missesBefore + 1);
  });

  it('asks again once the time to live has passed', async () => {
    await gql(CATALOG);
    now += 2000;
    await gql(CATALOG);
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards', 'GET /api/v1/rewards']);
  });

  it('never answers one credential with what another was answered', async () => {
    await gql(CATALOG, DEMO_TOKENS.member);
    await gql(CATALOG, DEMO_TOKENS.admin);
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards', 'GET /api/v1/rewards']);
    // Each credential's own answer is kept for it.
    await gql(CATALOG, DEMO_TOKENS.admin);
    await gql(CATALOG, DEMO_TOKENS.member);
    expect(await upstreamCalls()).toHaveLength(2);
  });

  it('never keeps a field that is not opted in, nor a read where only some root fields are', async () => {
    const reward = '{ reward(id: "rw_bookshop_25") { id name } }';
    const mixed = '{ rewardCatalog { name } reward(id: "rw_bookshop_25") { id } }';
    for (const query of [reward, reward, mixed, mixed]) expect((await gql(query)).errors).toBeUndefined();
    expect((await upstreamCalls()).sort()).toEqual(['GET /api/v1/rewards', 'GET /api/v1/rewards', 'GET /api/v1/rewards/rw_bookshop_25', 'GET /api/v1/rewards/rw_bookshop_25', 'GET /api/v1/rewards/rw_bookshop_25', 'GET /api/v1/rewards/rw_bookshop_25']);
  });

  it('never keeps a mutation', async () => {
    const remove = 'mutation { deleteWebhook(id: "wh_missing") { id } }';
    const [first, second] = [await gql(remove, DEMO_TOKENS.admin), await gql(remove, DEMO_TOKENS.admin)];
    expect(first.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(second).toEqual(first);
    expect(await upstreamCalls()).toEqual(['DELETE /api/v1/webhooks/wh_missing', 'DELETE /api/v1/webhooks/wh_missing']);
  });

  it('keeps nothing that came with an error', async () => {
    await recognition.fault({ path: '/api/v1/rewards', status: 500 });
    try {
      expect((await gql(CATALOG)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    } finally {
      await recognition.reset();
    }
    await recognition.clearRequests();
    expect((await gql(CATALOG)).errors).toBeUndefined();
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards']);
  });

  it('forgets what a credential was kept of a subgraph once it sends that subgraph a mutation, and only that credential’s', async () => {
    await gql(CATALOG, DEMO_TOKENS.admin);
    await gql(CATALOG, DEMO_TOKENS.member);
    // Refused by the service, yet sent: the gateway cannot tell what a mutation changed.
    expect((await gql('mutation { deleteWebhook(id: "wh_missing") { id } }', DEMO_TOKENS.admin)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await gql(CATALOG, DEMO_TOKENS.admin);
    await gql(CATALOG, DEMO_TOKENS.member);
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards', 'GET /api/v1/rewards', 'DELETE /api/v1/webhooks/wh_missing', 'GET /api/v1/rewards']);
  });

  it.each([
    ['sharing reads in flight', () => gateway.graphqlUrl],
    ['with GATEWAY_DEDUPE_READS off', () => undeduped.graphqlUrl],
  ])('never keeps a read that was on its way when the same credential sent a mutation, %s', async (_mode, urlOf) => {
    const url = urlOf();
    // Used up by the first read: no reset, which would clear the request log.
    await recognition.fault({ path: '/api/v1/rewards', method: 'GET', latencyMs: 1000, times: 1 });
    const before = gql(CATALOG, DEMO_TOKENS.admin, url);
    await expect.poll(upstreamCalls, { interval: 20 }).toEqual(['GET /api/v1/rewards']);
    await gql('mutation { deleteWebhook(id: "wh_missing") { id } }', DEMO_TOKENS.admin, url);
    expect((await before).errors).toBeUndefined();
    // Within the time to live (the clock has not moved), yet asked again; this answer is kept.
    await gql(CATALOG, DEMO_TOKENS.admin, url);
    await gql(CATALOG, DEMO_TOKENS.admin, url);
    expect(await upstreamCalls()).toEqual(['GET /api/v1/rewards', 'DELETE /api/v1/webhooks/wh_missing', 'GET /api/v1/rewards']);
  });
});

describe('GATEWAY_MICRO_CACHE at start', () => {
  it('stops the gateway, naming the setting, when it lists a field the graph lacks (a typo was never kept, silently)', async () => {
    const config = readGatewayConfig({ GATEWAY_MICRO_CACHE: 'Query.rewardCatalog:2000,Query.rewardCatalgo:500' }, { port: 0, subgraphUrls: Object.fromEntries(t.stack.services.map((service) => [service.name, service.subgraphUrl])) });
    await expect(startGateway(config, testLogger('micro-cache-typo'))).rejects.toThrow(new ConfigError('GATEWAY_MICRO_CACHE names fields the graph has no Query field for: Query.rewardCatalgo'));
  });
});
