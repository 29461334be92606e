import { describe, expect, it } from 'vitest';
import type { SubgraphAnswer } from '../../gateway/fetcher.ts';
import { createMicroCache, credentialDigest } from '../../gateway/microCache.ts';
import { createDropBatches, MAX_DROPS_PER_MESSAGE, readDropsMessage, type DropChannel, type Drops } from '../../gateway/microCacheChannel.ts';
import { createWriteFence } from '../../gateway/writeFence.ts';

const answer = (data: unknown): SubgraphAnswer => ({ status: 200, headers: {}, bytes: Buffer.from(JSON.stringify({ data })) });
const digest = credentialDigest('{"x-recognition-token":"member"}');

/** A send that finishes only when told, to see what gathers while a message is on its way. */
function heldSends() {
  const sent: Drops[] = [];
  const finishers: ((ok: boolean) => void)[] = [];
  const send = (drops: Drops) =>
    new Promise<void>((resolve, reject) => {
      sent.push(drops);
      finishers.push((ok) => (ok ? resolve() : reject(new Error('refused'))));
    });
  const finish = async (ok = true) => {
    finishers.shift()!(ok);
    // Let the batch's own continuation run.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { sent, send, finish };
}

describe('a message on the micro-cache channel', () => {
  it('is read when a gateway could have sent it', () => {
    expect(readDropsMessage(JSON.stringify({ v: 1, from: 'g1', n: 3, drops: [['recognition', digest]] }))).toEqual({ from: 'g1', n: 3, drops: [{ subgraph: 'recognition', digest }] });
    expect(readDropsMessage(JSON.stringify({ v: 1, from: 'g1', n: 4, all: true }))).toEqual({ from: 'g1', n: 4, drops: 'all' });
  });

  it('is ignored otherwise: not JSON, the wrong shape, a credential in place of a digest, too many drops, too long', () => {
    const drops = (count: number) => Array.from({ length: count }, () => ['recognition', digest]);
    for (const text of [
      'not json',
      'null',
      '[]',
      '{}',
      JSON.stringify({ v: 2, from: 'g1', n: 1, all: true }),
      JSON.stringify({ v: 1, from: 'g1', n: 1, all: 'yes' }),
      JSON.stringify({ v: 1, from: 'g1', n: -1, all: true }),
      JSON.stringify({ v: 1, from: 'g1', n: 1, drops: [] }),
      JSON.stringify({ v: 1, from: 'g1', n: 1, drops: [['recognition', 'demo-member-token-4b8e6d2a9c1f3e5a']] }),
      JSON.stringify({ v: 1, from: 'g1', n: 1, drops: [['', digest]] }),
      JSON.stringify({ v: 1, from: 'g1', n: 1, drops: drops(MAX_DROPS_PER_MESSAGE + 1) }),
      JSON.stringify({ v: 1, from: 'g1', n: 1, drops: [['recognition', digest]], padding: 'x'.repeat(70_000) }),
      '{"__proto__":{"all":true},"v":1,"from":"g1","n":1}',
    ]) {
      expect(readDropsMessage(text), text.slice(0, 80)).toBeUndefined();
    }
  });
});

describe('drops gathered into messages', () => {
  it('sends what comes while a message is on its way in one more message, each credential once, and answers each publish once its own message is sent', async () => {
    const { sent, send, finish } = heldSends();
    const batches = createDropBatches({ send, ready: () => true });
    const settled: number[] = [];
    void batches.publish('recognition', 'a').then(() => settled.push(0));
    const burst = Array.from({ length: 100 }, (_, index) => batches.publish('recognition', index % 2 ? 'a' : 'b').then(() => settled.push(index + 1)));
    expect(sent).toEqual([[{ subgraph: 'recognition', digest: 'a' }]]);
    await finish();
    // The first is answered; the burst waits for its own message, which holds each credential once.
    expect(settled).toEqual([0]);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual([
      { subgraph: 'recognition', digest: 'b' },
      { subgraph: 'recognition', digest: 'a' },
    ]);
    await finish();
    await Promise.all(burst);
    expect(settled).toHaveLength(101);
    expect(sent).toHaveLength(2);
  });

  it('says "everything" past the bound of credentials named in one message', async () => {
    const { sent, send, finish } = heldSends();
    const batches = createDropBatches({ send, ready: () => true, maxDrops: 3 });
    void batches.publish('recognition', 'first');
    for (const name of ['a', 'b', 'c', 'd', 'e']) void batches.publish('recognition', name);
    expect(batches.pending).toBe('all');
    await finish();
    expect(sent[1]).toBe('all');
  });

  it('waits for nothing while the channel is down, and sends what it gathered once it is back', async () => {
    const { sent, send, finish } = heldSends();
    let ready = false;
    const batches = createDropBatches({ send, ready: () => ready });
    await batches.publish('recognition', 'a');
    await batches.publish('dashboards', 'b');
    expect(sent).toEqual([]);
    ready = true;
    batches.flush();
    expect(sent).toEqual([
      [
        { subgraph: 'recognition', digest: 'a' },
        { subgraph: 'dashboards', digest: 'b' },
      ],
    ]);
    await finish();
    expect(batches.pending).toBe(0);
  });

  it('keeps a failed message’s drops for the next, without retrying in a loop, and still answers the publish', async () => {
    const { sent, send, finish } = heldSends();
    const batches = createDropBatches({ send, ready: () => true });
    const publish = batches.publish('recognition', 'a');
    await finish(false);
    await publish;
    expect(sent).toHaveLength(1);
    expect(batches.pending).toBe(1);
    batches.flush();
    expect(sent[1]).toEqual([{ subgraph: 'recognition', digest: 'a' }]);
  });
});

describe('the micro-cache with a channel', () => {
  function channel() {
    let listener: (drops: Drops) => void = () => undefined;
    const published: [string, string][] = [];
    const stub: Omit<DropChannel, 'live'> & { live: boolean; tell(drops: Drops): void; published: [string, string][] } = {
      live: true,
      publish: async (subgraph, digest) => void published.push([subgraph, digest]),
      caughtUp: async () => undefined,
      listen: (next) => void (listener = next),
      close: async () => undefined,
      tell: (drops) => listener(drops),
      published,
    };
    return stub;
  }
  const fields = new Map([['Query.rewardCatalog', 2000]]);
  const member = '{"x-recognition-token":"member"}';
  const admin = '{"x-recognition-token":"admin"}';

  it('answers from nothing and keeps nothing while the channel is not live', () => {
    const shared = channel();
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000, channel: shared });
    const key = cache.keyOf('recognition', member, '{"query":"{ rewardCatalog { name } }"}', {});
    cache.set(key, answer(1), 1000);
    shared.live = false;
    expect(cache.get(key)).toBeUndefined();
    cache.set(key, answer(2), 1000);
    shared.live = true;
    expect(cache.get(key)?.bytes.toString()).toBe('{"data":1}');
  });

  it('drops what another gateway’s write names, and only that; everything on "all"; and tells the watchers', () => {
    const shared = channel();
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000, channel: shared });
    const watched: (string[] | undefined)[] = [];
    cache.watch('recognition', (digests) => watched.push(digests && [...digests]));
    const keys = [cache.keyOf('recognition', member, 'a', {}), cache.keyOf('recognition', admin, 'a', {}), cache.keyOf('dashboards', member, 'a', {})];
    for (const key of keys) cache.set(key, answer(key), 1000);
    shared.tell([{ subgraph: 'recognition', digest: credentialDigest(member) }]);
    expect(keys.map((key) => cache.get(key) !== undefined)).toEqual([false, true, true]);
    expect(watched).toEqual([[credentialDigest(member)]]);
    shared.tell('all');
    expect(cache.entries).toBe(0);
    expect(cache.bytes).toBe(0);
    expect(watched).toEqual([[credentialDigest(member)], undefined]);
  });

  it('announces a write by the credential’s digest, never the credential', async () => {
    const shared = channel();
    const cache = createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000, channel: shared });
    await cache.announce('recognition', member);
    expect(shared.published).toEqual([['recognition', credentialDigest(member)]]);
    expect(JSON.stringify(shared.published)).not.toContain('member');
    // Alone, there is no one to tell.
    await expect(createMicroCache({ fields, maxEntries: 10, maxBytes: 10_000 }).announce('recognition', member)).resolves.toBeUndefined();
  });
});

describe('the write fence told of writes elsewhere', () => {
  it('overtakes the running reads of the credentials named, or of every credential', () => {
    const fence = createWriteFence();
    const [memberRead, adminRead] = [fence.begin('member'), fence.begin('admin')];
    fence.overtakeEvery((credential) => credential === 'member');
    expect([memberRead.overtaken, adminRead.overtaken, fence.running]).toEqual([true, false, 1]);
    const later = fence.begin('member');
    fence.overtakeEvery();
    expect([later.overtaken, adminRead.overtaken, fence.running]).toEqual([true, true, 0]);
  });
});
