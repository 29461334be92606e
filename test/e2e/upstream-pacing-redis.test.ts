import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Started } from '../../lib/http.ts';
import { startEmulator, type LoggedRequest } from '../../emulators/kit/emulator.ts';
import { createMarketplaceEmulator } from '../../emulators/marketplace/emulator.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readMarketplaceConfig } from '../../subgraphs/marketplace/config.ts';
import { createMarketplaceSubgraph } from '../../subgraphs/marketplace/server.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import { emulatorControl, type GraphQLResult } from '../support/stack.ts';
import { capturedLogs, testLogger } from '../support/logs.ts';
import { requireBinary } from '../support/binaries.ts';
import { startRedis } from '../support/redisServer.ts';
import { startSilentServer } from '../support/silentServer.ts';
import { Redis } from 'ioredis';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/**
 * Replicas that share a credential share its published rate: with REDIS_URL the pacing slots live
 * in Redis, so two marketplace subgraphs together stay under the emulator's 9 a second on products
 * with no share setting, and a Redis gone leaves each paced by its own share.
 */
const products = PUBLISHED_RATES.marketplace!.classes.find((rateClass) => rateClass.name === 'products')!;
const seller = SELLER_HEADERS;
const productReads = (count: number, from: number) => `{ ${Array.from({ length: count }, (_, index) => `p${index}: product(sku: "SKU-${String(from + index).padStart(4, '0')}") { sku }`).join(' ')} }`;
const times = (entries: readonly LoggedRequest[]) => entries.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
const busiestWindow = (at: readonly number[], windowMs = 1000) => Math.max(0, ...at.map((from) => at.filter((t) => t >= from && t < from + windowMs).length));

async function gql(url: string, query: string): Promise<GraphQLResult> {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...seller }, body: JSON.stringify({ query }) });
  return (await response.json()) as GraphQLResult;
}

describe.skipIf(!requireBinary('redis-server'))('upstream pacing shared through Redis', async () => {
  const closers: Started[] = [];
  afterAll(async () => {
    for (const started of closers.reverse()) await started.close();
  });
  const redis = await startRedis();
  afterAll(() => redis.close());
  const emulatorServer = await startEmulator(createMarketplaceEmulator(), 0);
  closers.push(emulatorServer);
  const emulator = emulatorControl(emulatorServer.url);
  const replica = async (env: Record<string, string>) => {
    const config = readMarketplaceConfig(env, { apiUrl: emulatorServer.url, port: 0, host: '127.0.0.1' });
    const started = await startSubgraph(createMarketplaceSubgraph(config, testLogger('marketplace-replica')), config);
    closers.push(started);
    return started.url;
  };
  const shared = [await replica({ REDIS_URL: redis.url }), await replica({ REDIS_URL: redis.url })];

  // Each test starts with every lane's slots free.
  const admin = new Redis(redis.url);
  afterAll(() => admin.disconnect());
  beforeEach(async () => {
    await emulator.reset();
    await admin.flushall();
  });

  it('keeps two replicas together under the published rate, with no 429, serving every call', async () => {
    const results = await Promise.all([gql(shared[0]!, productReads(12, 1)), gql(shared[1]!, productReads(12, 13))]);
    for (const result of results) {
      expect(result.errors).toBeUndefined();
      expect(Object.values(result.data ?? {}).every((product) => product !== null)).toBe(true);
    }
    const log = await emulator.requests();
    expect(log.map((entry) => entry.status)).toEqual(Array(24).fill(200));
    const at = times(log);
    expect(busiestWindow(at)).toBeLessThanOrEqual(products.requests);
    // Apart, each replica would have sent nine at once: 18 in the first second.
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(2 * products.perMs);
    const metrics = await (await fetch(`${shared[0]}/metrics`)).text();
    for (const secret of [DEMO_CREDENTIALS.apiKey, DEMO_CREDENTIALS.accountKey, DEMO_CREDENTIALS.email]) expect(metrics).not.toContain(secret);
  });

  it('refuses at once, unsent, the calls whose shared turn would come after their deadline', async () => {
    const short = await replica({ REDIS_URL: redis.url, MARKETPLACE_TIMEOUT_MS: '1000' });
    const result = await gql(short, productReads(20, 1));
    // Nine go at once; the tenth's turn is a window later, past the 1000 ms deadline.
    expect(result.errors).toHaveLength(20 - products.requests);
    for (const error of result.errors ?? []) expect(error.extensions).toMatchObject({ code: 'RATE_LIMITED', service: 'marketplace', retryAfterSeconds: 1 });
    expect((await emulator.requests()).map((entry) => entry.status)).toEqual(Array(products.requests).fill(200));
    const metrics = await (await fetch(`${short}/metrics`)).text();
    expect(metrics).toMatch(/marketplace_upstream_pacing_refused_total\{service="marketplace",class="products",reason="deadline"\} 11/);
  });

  it('holds every replica back a window after the service answered one of them 429', async () => {
    // Another client of the credential spent the second's budget: the service refuses the next call.
    await emulator.fault({ path: '/products/*', status: 429, times: 1 });
    const first = await gql(shared[0]!, productReads(1, 1));
    expect(first.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    const refusedAt = Date.parse((await emulator.requests()).at(-1)!.at);
    // The other replica's next call waits out the window before it is sent.
    const second = await gql(shared[1]!, productReads(1, 2));
    expect(second.errors).toBeUndefined();
    const sentAt = Date.parse((await emulator.requests()).at(-1)!.at);
    expect(sentAt - refusedAt).toBeGreaterThanOrEqual(products.perMs - 50);
  });

  it('drops a waiting call from the shared queue, unsent, when its client goes away', async () => {
    // One a second on every other endpoint: the first takes the second's slot.
    expect((await gql(shared[0]!, '{ statusTypes { code } }')).errors).toBeUndefined();
    const leaving = new AbortController();
    const abandoned = fetch(`${shared[1]}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...seller }, body: JSON.stringify({ query: '{ statusTypes { code } }' }), signal: leaving.signal }).catch(() => 'gone');
    await new Promise((resolve) => setTimeout(resolve, 200));
    leaving.abort();
    expect(await abandoned).toBe('gone');
    // Past the window, nothing more reached the service, and the next call goes at once.
    await new Promise((resolve) => setTimeout(resolve, products.perMs));
    expect((await emulator.requests()).map((entry) => entry.path)).toEqual(['/status_types']);
    const started = Date.now();
    expect((await gql(shared[1]!, '{ statusTypes { code } }')).errors).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(products.perMs / 2);
    expect((await emulator.requests()).map((entry) => entry.path)).toEqual(['/status_types', '/status_types']);
  });

  it('paces alone a while, after one short wait, when Redis accepts the connection and never answers', async () => {
    const silent = await startSilentServer();
    const hung = await replica({ REDIS_URL: silent.url, UPSTREAM_PACING_SHARE_PERCENT: '50' });
    const started = Date.now();
    const first = await gql(hung, productReads(3, 1));
    const firstMs = Date.now() - started;
    expect(first.errors).toBeUndefined();
    // One command timeout (500 ms), not one per call, nor a hang.
    expect(firstMs).toBeLessThan(2000);
    const again = Date.now();
    expect((await gql(hung, productReads(3, 4))).errors).toBeUndefined();
    expect(Date.now() - again).toBeLessThan(400);
    expect((await emulator.requests()).map((entry) => entry.status)).toEqual(Array(6).fill(200));
  });

  it('paces by this process alone, at its share, when Redis does not answer', async () => {
    const gone = await startRedis();
    const orphan = await replica({ REDIS_URL: gone.url, UPSTREAM_PACING_SHARE_PERCENT: '50' });
    await gone.close();
    const result = await gql(orphan, productReads(12, 1));
    expect(result.errors).toBeUndefined();
    const log = await emulator.requests();
    // Unpaced, three of the twelve would meet the emulator's 429.
    expect(log.map((entry) => entry.status)).toEqual(Array(12).fill(200));
    // Half the rate: nine slots a window stretched to two seconds.
    const at = times(log);
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(2 * products.perMs);
    expect(capturedLogs.some((line) => line.includes('shared upstream pacing unavailable'))).toBe(true);
  });
});
