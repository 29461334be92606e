import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import type { DownloadStore } from '../../subgraphs/kit/downloads.ts';
import { createRedisDownloadStore } from '../../subgraphs/kit/redisDownloads.ts';
import { linkOwnerOf, readLabelsPdfDownload, type LabelsPdfDownload } from '../../subgraphs/marketplace/context.ts';
import { requireBinary } from '../support/binaries.ts';
import { startRedis } from '../support/redisServer.ts';
import { startMarketplaceRedisReplicas } from '../support/marketplaceRedisReplicas.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/**
 * With REDIS_URL the label PDF links had no count per owner and no total: one caller could fill
 * Redis with links until they expired, and the same group asked for again made a new link each
 * time. Links in Redis now keep the in-memory store's bounds and semantics, across replicas.
 */
const of = (caller: string, plpId: string, extra: Partial<LabelsPdfDownload['credential']> = {}): LabelsPdfDownload => ({ plpId, credential: { apiKey: `key-${caller}`, email: `${caller}@example.com`, ...extra } });

describe.skipIf(!requireBinary('redis-server'))('label PDF links in Redis, counted per owner', async () => {
  const redis = await startRedis();
  afterAll(() => redis.close());
  const inspect = new Redis(redis.url);
  afterAll(() => inspect.quit());
  beforeEach(() => inspect.flushall());

  // Redis's own expiry runs on the wall clock: a lifetime long enough that none passes during a test.
  const TTL = 100_000;
  let now = 0;
  const stores: DownloadStore<LabelsPdfDownload>[] = [];
  afterAll(() => Promise.all(stores.map((store) => store.close())));
  /** A store as one replica opens it; several on one prefix are several replicas. */
  function replica(options: { maxEntries?: number; maxEntriesPerOwner?: number } = {}) {
    const store = createRedisDownloadStore<LabelsPdfDownload>({ url: redis.url, prefix: 'graph:owners-test', ttlMs: TTL, read: readLabelsPdfDownload, service: 'marketplace', ownerOf: linkOwnerOf, now: () => now, ...options });
    stores.push(store);
    return store;
  }
  const at = (time: number) => void (now = time);
  beforeEach(() => at(0));

  async function issueMany(store: ReturnType<typeof replica>, caller: string, count: number, from = 0): Promise<string[]> {
    const ids: string[] = [];
    for (let index = from; index < from + count; index++) ids.push((await store.issue(of(caller, `plp-${index}`))).id);
    return ids;
  }

  /** The link keys (one per link) under the test's prefix. */
  const linkKeys = async () => (await inspect.keys('graph:owners-test:download:*')).filter((key) => /^graph:owners-test:download:[A-Za-z0-9_-]{43}$/.test(key));

  it('hold a flood of more than 1,000 links by one owner to 1,000: its own oldest go, another owner’s link stays, and Redis holds no owner readable and nothing without an expiry', async () => {
    const links = replica();
    const [victim] = await issueMany(links, 'victim', 1);
    const flood = await issueMany(links, 'attacker', 1200);
    expect(await links.find(victim!)).toEqual(of('victim', 'plp-0'));
    expect(await links.find(flood[0]!)).toBeUndefined();
    expect(await links.find(flood[199]!)).toBeUndefined();
    expect(await links.find(flood[200]!)).toEqual(of('attacker', 'plp-200'));
    expect(await links.find(flood.at(-1)!)).toEqual(of('attacker', 'plp-1199'));
    expect(await linkKeys()).toHaveLength(1001);
    // Every key expires with the links, and none names or holds an owner or a credential readably.
    const keys = await inspect.keys('*');
    for (const key of keys) {
      const ttl = await inspect.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(2 * TTL);
    }
    const dump = (await Promise.all(keys.map(async (key) => {
      const type = await inspect.type(key);
      if (type === 'string') return [key, (await inspect.getBuffer(key))!.toString('latin1')];
      if (type === 'zset') return [key, ...(await inspect.zrange(key, 0, -1, 'WITHSCORES'))];
      if (type === 'hash') return [key, ...Object.entries(await inspect.hgetall(key)).flat()];
      return [key, type];
    }))).flat().join('\n');
    for (const secret of ['key-attacker', 'attacker@example.com', 'key-victim', 'victim@example.com', victim!, flood.at(-1)!]) expect(dump.includes(secret), secret).toBe(false);
  }, 60_000);

  it('hand out the same link for the same owner and group while it has half its life ahead, then a fresh one', async () => {
    const links = replica();
    const first = await links.issue(of('a', '7001'));
    // Keys in another order are the same value.
    expect(await links.issue({ credential: { email: 'a@example.com', apiKey: 'key-a' }, plpId: '7001' })).toEqual(first);
    expect((await links.issue(of('a', '7002'))).id).not.toBe(first.id);
    expect((await links.issue(of('b', '7001'))).id).not.toBe(first.id);
    // Another credential of the same owner opens with that credential: its own link.
    expect((await links.issue(of('a', '7001', { accountKey: 'other' }))).id).not.toBe(first.id);
    at(49_900);
    expect(await links.issue(of('a', '7001'))).toEqual(first);
    at(50_000);
    const fresh = await links.issue(of('a', '7001'));
    expect(fresh.id).not.toBe(first.id);
    expect(fresh.expiresAt).toBe(150_000);
    at(99_900);
    expect(await links.issue(of('a', '7001'))).toEqual(fresh);
    expect(await links.find(first.id)).toEqual(of('a', '7001'));
    at(100_100);
    expect(await links.find(first.id)).toBe('expired');
    // A clock gone back past the link held: a fresh one, which does not outlive its promise.
    at(0);
    const back = await links.issue(of('a', '7001'));
    expect(back.id).not.toBe(fresh.id);
    expect(back.expiresAt).toBe(TTL);
    // 1,000 aliases of two groups stand for two links.
    const asked = new Set<string>();
    for (let alias = 0; alias < 1000; alias++) asked.add((await links.issue(of('c', `plp-${alias % 2}`))).id);
    expect(asked.size).toBe(2);
    // What points a group at its link, made unreadable, gives a fresh link rather than an error.
    for (const key of await inspect.keys('graph:owners-test:download:value:*')) await inspect.set(key, 'x'.repeat(100_000), 'KEEPTTL');
    const rebuilt = await links.issue(of('c', 'plp-0'));
    expect(asked.has(rebuilt.id)).toBe(false);
    expect(await links.find(rebuilt.id)).toEqual(of('c', 'plp-0'));
    expect(await links.issue(of('c', 'plp-0'))).toEqual(rebuilt);
    // One that names a live link but holds an id sealed under no key of this value: likewise.
    for (const key of await inspect.keys('graph:owners-test:download:value:*')) {
      const pointer = (await inspect.get(key))!;
      await inspect.set(key, `${pointer.slice(0, pointer.indexOf('|') + 1)}${'A'.repeat(120)}`, 'KEEPTTL');
    }
    const resealed = await links.issue(of('c', 'plp-0'));
    expect(resealed.id).not.toBe(rebuilt.id);
    expect(await links.find(resealed.id)).toEqual(of('c', 'plp-0'));
    expect(await links.issue(of('c', 'plp-0'))).toEqual(resealed);
  });

  it('keep the total bound: when full the owner holding the most gives way, never one holding as few as the caller asking', async () => {
    const links = replica({ maxEntries: 10, maxEntriesPerOwner: 10 });
    const small = await issueMany(links, 'small', 2);
    const big = await issueMany(links, 'big', 8);
    const newcomer = await issueMany(links, 'newcomer', 3);
    expect(await links.find(big[0]!)).toBeUndefined();
    expect(await links.find(big[2]!)).toBeUndefined();
    expect(await links.find(big[3]!)).toBeDefined();
    for (const id of [...small, ...newcomer]) expect(await links.find(id)).toBeDefined();
    // A caller holding as many as the biggest pays for its own.
    await issueMany(links, 'big', 2, 100);
    expect(await links.find(big[3]!)).toBeUndefined();
    expect(await links.find(big[4]!)).toBeUndefined();
    for (const id of [...small, ...newcomer]) expect(await links.find(id)).toBeDefined();
    expect(await linkKeys()).toHaveLength(10);
    // A flood of owners, each with one link, keeps to the bound too.
    for (let caller = 0; caller < 50; caller++) await issueMany(links, `one-${caller}`, 1);
    expect(await linkKeys()).toHaveLength(10);
  });

  it('give up a dead link before anyone’s live one', async () => {
    const links = replica({ maxEntries: 3, maxEntriesPerOwner: 3 });
    const [dead] = await issueMany(links, 'early', 1);
    at(60_000);
    const live = await issueMany(links, 'small', 1);
    const other = await issueMany(links, 'other', 1);
    at(100_100);
    expect(await links.find(dead!)).toBe('expired');
    await issueMany(links, 'newcomer', 1);
    expect(await links.find(dead!)).toBeUndefined();
    for (const id of [...live, ...other]) expect(await links.find(id)).toBeDefined();
    // A lifetime after they expired, links are forgotten, and counted no more.
    at(300_200);
    const [late] = await issueMany(links, 'small', 1, 10);
    expect(await linkKeys()).toHaveLength(1);
    expect(await links.find(late!)).toEqual(of('small', 'plp-10'));
  });

  it('agree across two replicas on one Redis: the same link, one count per owner, one total', async () => {
    const [one, two] = [replica({ maxEntries: 6, maxEntriesPerOwner: 3 }), replica({ maxEntries: 6, maxEntriesPerOwner: 3 })];
    const made = await one.issue(of('a', '7001'));
    expect(await two.issue(of('a', '7001'))).toEqual(made);
    expect(await two.find(made.id)).toEqual(of('a', '7001'));
    // Asked for at once on both, one link.
    const together = await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 ? one : two).issue(of('b', '7009'))));
    expect(new Set(together.map((link) => link.id)).size).toBe(1);
    // One owner's links on either replica count against one bound.
    const first = await issueMany(one, 'c', 2);
    const later = await issueMany(two, 'c', 2, 10);
    expect(await two.find(first[0]!)).toBeUndefined();
    for (const id of [first[1]!, ...later]) expect(await one.find(id)).toBeDefined();
    // And against one total: a, b and c hold 1, 1 and 3; d's first link fills it, its second takes c's oldest.
    await issueMany(one, 'd', 1);
    await issueMany(two, 'd', 1, 1);
    expect(await one.find(first[1]!)).toBeUndefined();
    expect(await one.find(made.id)).toBeDefined();
    expect(await linkKeys()).toHaveLength(6);
  });

  it('refuse bounds that make no sense, naming them', () => {
    expect(() => replica({ maxEntries: 0 })).toThrow(/maxEntries must be a positive integer; got 0/);
    expect(() => replica({ maxEntries: 10, maxEntriesPerOwner: 11 })).toThrow(/maxEntriesPerOwner must be at most maxEntries \(10\); got 11/);
  });
});

describe.skipIf(!requireBinary('redis-server'))('label PDF links with REDIS_URL against another caller’s requests', async () => {
  const redis = await startRedis();
  afterAll(() => redis.close());
  const TTL_MS = 300_000;
  const { clock, t, replica, inspect } = await startMarketplaceRedisReplicas(redis.url, TTL_MS);
  const attacker = { 'x-marketplace-user-token': DEMO_CREDENTIALS.userToken, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };

  it('outlive 50 requests of 100 aliased labelsPdf by another credential, which stand for two links on either replica', async () => {
    const result = await t.gql<{ labelGroup: { labelsPdf: { url: string; expiresAt: string } } }>('{ labelGroup(id: "7001") { labelsPdf { url expiresAt } } }', { headers: SELLER_HEADERS });
    expect(result.errors).toBeUndefined();
    const { url: link, expiresAt } = result.data!.labelGroup.labelsPdf;
    const aliases = Array.from({ length: 100 }, (_, index) => `p${index}: labelsPdf { url }`).join(' ');
    const ids = new Set<string>();
    let issued = 0;
    for (let request = 0; request < 50; request++) {
      const flood = await t.gql<{ labelGroups: Record<string, { url: string } | string>[] }>(`{ labelGroups { id ${aliases} } }`, { headers: attacker });
      expect(flood.errors).toBeUndefined();
      for (const group of flood.data!.labelGroups) {
        for (const [field, value] of Object.entries(group)) {
          if (field === 'id' || typeof value === 'string') continue;
          ids.add(value.url.slice(value.url.lastIndexOf('/') + 1));
          issued++;
        }
      }
    }
    expect(issued).toBe(10_000);
    expect(ids.size).toBe(2);
    // The replica that made none of them hands out the same links.
    const direct = await fetch(`${replica.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...attacker },
      body: JSON.stringify({ query: '{ labelGroups { labelsPdf { url } } }' }),
    });
    const answer = (await direct.json()) as { data: { labelGroups: { labelsPdf: { url: string } }[] } };
    expect(new Set(answer.data.labelGroups.map((group) => group.labelsPdf.url.slice(group.labelsPdf.url.lastIndexOf('/') + 1)))).toEqual(ids);
    expect((await inspect.keys('graph:marketplace:download:*')).filter((key) => /^graph:marketplace:download:[A-Za-z0-9_-]{43}$/.test(key))).toHaveLength(3);
    clock.advance(Date.parse(expiresAt) - 1_000 - clock.now());
    const response = await fetch(link);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString('latin1').startsWith('%PDF-1.4')).toBe(true);
    clock.reset();
  }, 120_000);
});
