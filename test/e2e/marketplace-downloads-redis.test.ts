import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { createRedisDownloadStore } from '../../subgraphs/kit/redisDownloads.ts';
import { requireBinary } from '../support/binaries.ts';
import { startRedis } from '../support/redisServer.ts';
import { startMarketplaceRedisReplicas } from '../support/marketplaceRedisReplicas.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

const seller = SELLER_HEADERS;

describe.skipIf(!requireBinary('redis-server'))('label PDF links with REDIS_URL', async () => {
  const redis = await startRedis();
  afterAll(() => redis.close());
  // The replica never saw the link being made.
  const { clock, t, emulator, replica, inspect } = await startMarketplaceRedisReplicas(redis.url, 120_000);

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
    // The link, its value's pointer to it, and the counts per owner and in all.
    const linkKeys = keys.filter((key) => /^graph:marketplace:download:[A-Za-z0-9_-]{43}$/.test(key));
    expect(linkKeys).toHaveLength(1);
    expect(keys.filter((key) => !linkKeys.includes(key)).sort()).toEqual([
      'graph:marketplace:download:all',
      expect.stringMatching(/^graph:marketplace:download:owner:[A-Za-z0-9_-]{43}$/),
      'graph:marketplace:download:owners',
      'graph:marketplace:download:seq',
      expect.stringMatching(/^graph:marketplace:download:value:[A-Za-z0-9_-]{43}$/),
    ]);
    const stored = (await inspect.getBuffer(linkKeys[0]!))!;
    const everything = [stored.toString('latin1')];
    for (const key of keys) {
      expect(key).not.toContain(link.id);
      const ttl = await inspect.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(240_000);
      const type = await inspect.type(key);
      if (type === 'zset') everything.push(...(await inspect.zrange(key, 0, -1)));
      if (type === 'string' && key !== linkKeys[0]) everything.push((await inspect.get(key))!);
    }
    for (const secret of [link.id, DEMO_CREDENTIALS.apiKey, DEMO_CREDENTIALS.accountKey, DEMO_CREDENTIALS.email, '7001']) {
      expect(stored.toString('base64').includes(Buffer.from(secret).toString('base64').slice(0, 8)), secret).toBe(false);
      // Beyond the sealed value, the expiry's digits are readable: the label group is no secret there.
      for (const text of secret === '7001' ? everything.slice(0, 1) : everything) {
        expect(text.includes(secret), secret).toBe(false);
        expect(text.includes(Buffer.from(secret).toString('base64').slice(0, 8)), secret).toBe(false);
      }
    }
    // An id whose key was swapped for another link's value opens nothing.
    const other = await pdfLink();
    expect(other.id).toBe(link.id);
    await inspect.flushall();
    const fresh = await pdfLink();
    const freshKey = (await inspect.keys('*')).find((key) => /^graph:marketplace:download:[A-Za-z0-9_-]{43}$/.test(key))!;
    await inspect.set(freshKey, stored);
    expect((await fetch(`${replica.url}/downloads/${fresh.id}`)).status).toBe(404);
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
