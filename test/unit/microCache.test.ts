import { describe, expect, it } from 'vitest';
import { readGatewayConfig } from '../../gateway/config.ts';
import type { SubgraphAnswer } from '../../gateway/fetcher.ts';
import { createMicroCache } from '../../gateway/microCache.ts';
import { ConfigError } from '../../lib/config.ts';

const answer = (data: unknown, status = 200): SubgraphAnswer => ({ status, headers: {}, bytes: Buffer.from(JSON.stringify({ data })) });

describe('GATEWAY_MICRO_CACHE', () => {
  it('is off unless fields are listed, each with its time to live in ms', () => {
    expect(readGatewayConfig({}).microCache.fields.size).toBe(0);
    expect([...readGatewayConfig({ GATEWAY_MICRO_CACHE: 'Query.rewardCatalog:2000, Query.dashboardStats:500' }).microCache.fields]).toEqual([
      ['Query.rewardCatalog', 2000],
      ['Query.dashboardStats', 500],
    ]);
  });

  it('refuses anything but Query fields with a time to live, naming the setting', () => {
    for (const value of ['Mutation.deleteWebhook:1000', 'Query.rewardCatalog', 'Query.rewardCatalog:0', 'rewardCatalog:100', 'Query.rewardCatalog:9999999']) {
      expect(() => readGatewayConfig({ GATEWAY_MICRO_CACHE: value })).toThrow(ConfigError);
      expect(() => readGatewayConfig({ GATEWAY_MICRO_CACHE: value })).toThrow(/GATEWAY_MICRO_CACHE/);
    }
  });
});

describe('the micro-cache', () => {
  const fields = new Map([
    ['Query.rewardCatalog', 2000],
    ['Query.leaderboard', 500],
    // Named as a Query field, yet a mutation's root: a mutation is never kept, whatever the list says.
    ['Query.deleteWebhook', 1000],
  ]);

  it('keeps only queries whose every root field is opted in, for the shortest of their times to live', () => {
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000 });
    expect(cache.ttlOf('query Catalog__recognition__0 { rewardCatalog { name } }')).toBe(2000);
    expect(cache.ttlOf('{ rewardCatalog { name } board: leaderboard { count } __typename }')).toBe(500);
    expect(cache.ttlOf('{ rewardCatalog { name } reward(id: "r") { id } }')).toBeUndefined();
    expect(cache.ttlOf('mutation { deleteWebhook(id: "w") { id } }')).toBeUndefined();
    expect(cache.ttlOf('query { ...Root } fragment Root on Query { rewardCatalog { name } }')).toBeUndefined();
    expect(cache.ttlOf('{ __typename }')).toBeUndefined();
    expect(cache.ttlOf('not graphql')).toBeUndefined();
  });

  it('keys a read by subgraph and every header sent, so a credential never reads another’s answer', () => {
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000 });
    const body = '{"query":"{ rewardCatalog { name } }"}';
    const member = cache.keyOf('recognition', 'member', body, { 'x-recognition-token': 'member' });
    expect(cache.keyOf('recognition', 'admin', body, { 'x-recognition-token': 'admin' })).not.toBe(member);
    expect(cache.keyOf('dashboards', 'member', body, { 'x-recognition-token': 'member' })).not.toBe(member);
    expect(cache.keyOf('recognition', 'member', body, { 'x-recognition-token': 'member' })).toBe(member);
    expect(member).not.toContain('member');
  });

  it('forgets an answer when its time to live is over, and counts hits and misses', () => {
    let now = 0;
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000, now: () => now });
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', answer({ a: 1 }), 500);
    now = 499;
    expect(cache.get('k')?.bytes.toString()).toBe('{"data":{"a":1}}');
    now = 500;
    expect(cache.get('k')).toBeUndefined();
    expect([cache.hits, cache.misses, cache.entries, cache.bytes]).toEqual([1, 2, 0, 0]);
  });

  it('keeps nothing that failed', () => {
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000 });
    cache.set('status', answer({ a: 1 }, 502), 1000);
    cache.set('errors', { status: 200, headers: {}, bytes: Buffer.from('{"data":null,"errors":[{"message":"no"}]}') }, 1000);
    cache.set('garbage', { status: 200, headers: {}, bytes: Buffer.from('<html>') }, 1000);
    expect(cache.entries).toBe(0);
  });

  it('holds at most maxEntries answers and maxBytes bytes, the oldest going first', () => {
    const cache = createMicroCache({ fields, maxEntries: 3, maxBytes: 100 });
    for (const key of ['a', 'b', 'c', 'd']) cache.set(key, answer(key), 1000);
    expect(cache.entries).toBe(3);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('d')).toBeDefined();
    // 60 bytes more: the oldest go until it fits.
    cache.set('big', answer('x'.repeat(45)), 1000);
    expect(cache.bytes).toBeLessThanOrEqual(100);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('big')).toBeDefined();
    // Larger than the whole budget: never kept, nothing evicted for it.
    const before = cache.entries;
    cache.set('huge', answer('x'.repeat(200)), 1000);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.entries).toBe(before);
  });

  it('drops every answer one credential was kept by one subgraph, and only those, when it sends a mutation', () => {
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000 });
    const keyOf = (subgraph: string, token: string, query: string) => cache.keyOf(subgraph, token, JSON.stringify({ query }), { 'x-token': token });
    const kept = [keyOf('recognition', 'member', '{ a }'), keyOf('recognition', 'member', '{ b }'), keyOf('recognition', 'admin', '{ a }'), keyOf('dashboards', 'member', '{ a }')];
    for (const key of kept) cache.set(key, answer(key), 1000);
    cache.drop('recognition', 'member');
    expect(kept.map((key) => cache.get(key) !== undefined)).toEqual([false, false, true, true]);
    expect(cache.entries).toBe(2);
    expect(cache.bytes).toBe(kept.slice(2).reduce((sum, key) => sum + answer(key).bytes.length + key.length, 0));
    // Nothing kept for it: nothing to do, and the group is gone once emptied.
    cache.drop('recognition', 'member');
    cache.drop('recognition', 'nobody');
    expect(cache.entries).toBe(2);
    cache.set(kept[0]!, answer('again'), 1000);
    expect(cache.get(kept[0]!)).toBeDefined();
  });
});
