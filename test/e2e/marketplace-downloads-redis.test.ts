import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createClock } from '../../emulators/kit/emulator.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { createRedisDownloadStore } from '../../subgraphs/kit/redisDownloads.ts';
import { readMarketplaceConfig } from '../../subgraphs/marketplace/config.ts';
import { createMarketplaceSubgraph } from '../../subgraphs/marketplace/server.ts';
import { requireBinary } from '../support/binaries.ts';
import { testLogger } from '../support/logs.ts';
import { startRedis } from '../support/redisServer.ts';
import { startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

const seller = SELLER_HEADERS;

describe.skipIf(!requireBinary('redis-server'))('label PDF links with REDIS_URL', async () => {
  const redis = await startRedis();
  afterAll(() => redis.close());
  const clock = createClock();
  const env = { REDIS_URL: redis.url, MARKETPLACE_DOWNLOAD_TTL_MS: '120000' };
  const t = await startTestStack(env, { now: () => clock.now() });
  const emulator = t.emulator('marketplace');
  // A second replica on the same Redis that never saw the link being made.
  const replica = await startSubgraph(createMarketplaceSubgraph(readMarketplaceConfig(env, { apiUrl: emulator.url, port: 0 }), testLogger('marketplace-replica'), { now: () => clock.now() }), { port: 0 });
  afterAll(() => replica.close());
  const inspect = new Redis(redis.url);
  afterAll(() => inspect.quit());

  async function pdfLink(): Promise<{ url: string; id: string }> {
    const result = await t.gql<{ labelGroup: { labelsPdf: { url: string } } }>('{ labelGroup(id: "7001") { labelsPdf { url expiresAt } } }', { headers: seller });
    expect(result.errors).toBeUndefined();
    const { url } = result.data!.labelGroup.labelsPdf;
    return { url, id: url.slice(url.lastIndexOf('/') + 1) };
  }

  it('are served by a replica that did not make them, until they expire', async () => {
    const link = await pdfLink();
    await emulator.clearRequests();
    const response = await fetch(`${replica.url}/downloads/${link.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await response.arrayBuffer()).toString('latin1').startsWith('%PDF-1.4')).toBe(true);
    // The replica called upstream with the credential of the caller who made the link.
    const [call] = await emulator.requests();
    expect(call).toMatchObject({ method: 'GET', path: '/shipments/mkt/view', query: { plp_id: '7001' }, status: 200 });
    expect(call!.headers).toEqual(expect.arrayContaining(['x-api-key', 'x-user-email', 'x-accountmanager-key']));

    clock.advance(121_000);
    expect((await fetch(`${replica.url}/downloads/${link.id}`)).status).toBe(410);
    expect((await fetch(link.url)).status).toBe(410);
    clock.advance(120_000);
    expect((await fetch(`${replica.url}/downloads/${link.id}`)).status).toBe(404);
    clock.reset();
  });

  it('leave in Redis neither the link nor the credential, under a prefix, with an expiry of two lifetimes', async () => {
    await inspect.flushall();
    const link = await pdfLink();
    const keys = await inspect.keys('*');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^graph:marketplace:download:[A-Za-z0-9_-]{43}$/);
    expect(keys[0]).not.toContain(link.id);
    const ttl = await inspect.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(240_000);
    const stored = (await inspect.getBuffer(keys[0]!))!;
    for (const secret of [link.id, DEMO_CREDENTIALS.apiKey, DEMO_CREDENTIALS.accountKey, DEMO_CREDENTIALS.email, '7001']) {
      expect(stored.includes(secret), secret).toBe(false);
      expect(stored.toString('base64').includes(Buffer.from(secret).toString('base64').slice(0, 8)), secret).toBe(false);
    }
    // An id whose key was swapped for another link's value opens nothing.
    const other = await pdfLink();
    const otherKey = (await inspect.keys('*')).find((key) => key !== keys[0])!;
    await inspect.set(otherKey, stored);
    expect((await fetch(`${replica.url}/downloads/${other.id}`)).status).toBe(404);
  });

  it('refuse a value over the bound without storing it, and fail typed when Redis does not answer', async () => {
    const small = createRedisDownloadStore({ url: redis.url, prefix: 'graph:bound-test', ttlMs: 60_000, read: (value) => value as string, service: 'marketplace', maxValueBytes: 256 });
    try {
      await expect(small.issue('x'.repeat(300))).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT', service: 'marketplace' } });
      expect(await inspect.keys('graph:bound-test:*')).toEqual([]);
      const { id } = await small.issue('fits');
      expect(await small.find(id)).toBe('fits');
    } finally {
      await small.close();
    }
    const { url: deadUrl, close } = await startRedis();
    await close();
    const dead = createRedisDownloadStore({ url: deadUrl, prefix: 'graph:dead', ttlMs: 60_000, read: (value) => value as string, service: 'marketplace', commandTimeoutMs: 500 });
    try {
      await expect(dead.issue('plp')).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE', service: 'marketplace' } });
      await expect(dead.find('A'.repeat(32))).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    } finally {
      await dead.close();
    }
  });
});
