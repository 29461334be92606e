import { describe, expect, it } from 'vitest';
import { createDownloadStore } from '../../subgraphs/kit/downloads.ts';
import { linkOwnerOf, type LabelsPdfDownload } from '../../subgraphs/marketplace/context.ts';

interface Value {
  plpId: string;
  credential: { apiKey: string; email?: string };
}

const of = (caller: string, plpId: string): Value => ({ plpId, credential: { apiKey: `key-${caller}` } });

function store(options: { maxEntries?: number; maxEntriesPerOwner?: number } = {}) {
  let now = 0;
  let reads = 0;
  const links = createDownloadStore<Value>({
    ttlMs: 1000,
    now: () => {
      reads++;
      return now;
    },
    ...options,
  });
  return {
    links,
    at: (time: number) => void (now = time),
    reads: () => reads,
  };
}

/** Issues `count` links of distinct label groups for `caller`, answering their ids in order. */
async function issueMany(links: ReturnType<typeof store>['links'], caller: string, count: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let index = from; index < from + count; index++) ids.push((await links.issue(of(caller, `plp-${index}`))).id);
  return ids;
}

describe('the download link store', () => {
  it('holds each owner to its own bound: its own oldest go first, another owner’s stay', async () => {
    const { links } = store({ maxEntries: 100, maxEntriesPerOwner: 5 });
    const [victim] = await issueMany(links, 'victim', 1);
    const own = await issueMany(links, 'attacker', 8);
    expect(await links.find(victim!)).toEqual(of('victim', 'plp-0'));
    expect(await Promise.all(own.map((id) => links.find(id)))).toEqual([undefined, undefined, undefined, ...[3, 4, 5, 6, 7].map((index) => of('attacker', `plp-${index}`))]);
  });

  it('when full, takes from the owner holding the most, never from one holding as few as the caller asking', async () => {
    const { links } = store({ maxEntries: 10, maxEntriesPerOwner: 10 });
    const small = await issueMany(links, 'small', 2);
    const big = await issueMany(links, 'big', 8);
    // A newcomer makes room at the biggest holder's expense, its oldest first.
    const newcomer = await issueMany(links, 'newcomer', 3);
    expect(await links.find(big[0]!)).toBeUndefined();
    expect(await links.find(big[2]!)).toBeUndefined();
    expect(await links.find(big[3]!)).toBeDefined();
    // Big now holds 5, small 2, newcomer 3: small keeps its links while anyone holds more.
    for (const id of [...small, ...newcomer]) expect(await links.find(id)).toBeDefined();
    // A caller holding as many as the biggest pays for its own: 'big' asking again evicts only its own.
    await issueMany(links, 'big', 2, 100);
    expect(await links.find(big[3]!)).toBeUndefined();
    expect(await links.find(big[4]!)).toBeUndefined();
    for (const id of [...small, ...newcomer]) expect(await links.find(id)).toBeDefined();
  });

  it('gives up a dead link before anyone’s live one', async () => {
    const { links, at } = store({ maxEntries: 3, maxEntriesPerOwner: 3 });
    const [dead] = await issueMany(links, 'early', 1);
    at(600);
    const live = await issueMany(links, 'small', 1);
    const other = await issueMany(links, 'other', 1);
    at(1001);
    expect(await links.find(dead!)).toBe('expired');
    await issueMany(links, 'newcomer', 1);
    expect(await links.find(dead!)).toBeUndefined();
    for (const id of [...live, ...other]) expect(await links.find(id)).toBeDefined();
  });

  it('hands out the same link for an equal value while it has half its life ahead, then a fresh one', async () => {
    const { links, at } = store();
    const first = await links.issue(of('a', '7001'));
    // Keys in another order are the same value.
    expect(await links.issue({ credential: { apiKey: 'key-a' }, plpId: '7001' })).toEqual(first);
    expect((await links.issue(of('a', '7002'))).id).not.toBe(first.id);
    expect((await links.issue(of('b', '7001'))).id).not.toBe(first.id);
    expect((await links.issue({ plpId: '7001', credential: { apiKey: 'key-a', email: 'x@example.com' } })).id).not.toBe(first.id);
    at(499);
    expect(await links.issue(of('a', '7001'))).toEqual(first);
    at(500);
    const fresh = await links.issue(of('a', '7001'));
    expect(fresh.id).not.toBe(first.id);
    expect(fresh.expiresAt).toBe(1500);
    at(999);
    expect(await links.issue(of('a', '7001'))).toEqual(fresh);
    // The first still works for the lifetime it promised, and no longer.
    expect(await links.find(first.id)).toEqual(of('a', '7001'));
    at(1001);
    expect(await links.find(first.id)).toBe('expired');
  });

  it('issues a fresh link when the clock has gone back past the one it holds, which would outlive its promise', async () => {
    const { links, at } = store();
    at(10_000);
    const ahead = await links.issue(of('a', '7001'));
    at(0);
    const now = await links.issue(of('a', '7001'));
    expect(now.id).not.toBe(ahead.id);
    expect(now.expiresAt).toBe(1000);
  });

  it('holds every link of an owner counted once however often the same one is asked for', async () => {
    const { links } = store({ maxEntries: 10, maxEntriesPerOwner: 2 });
    const [victim] = await issueMany(links, 'victim', 1);
    const asked = new Set<string>();
    for (let alias = 0; alias < 1000; alias++) asked.add((await links.issue(of('attacker', `plp-${alias % 2}`))).id);
    expect(asked.size).toBe(2);
    expect(await links.find(victim!)).toBeDefined();
  });

  it('issues without reading every link it holds', async () => {
    const { links, reads } = store({ maxEntries: 10_000, maxEntriesPerOwner: 10 });
    for (let caller = 0; caller < 1000; caller++) await issueMany(links, `caller-${caller}`, 10);
    const before = reads();
    for (let caller = 0; caller < 1000; caller++) await issueMany(links, `late-${caller}`, 1);
    // Each issue reads the clock once, full store or not; it used to read it once per link held.
    expect(reads() - before).toBe(1000);
  });

  it('refuses bounds that make no sense, naming them', () => {
    expect(() => createDownloadStore({ ttlMs: 1000, maxEntries: 0 })).toThrow(/maxEntries must be a positive integer; got 0/);
    expect(() => createDownloadStore({ ttlMs: 1000, maxEntries: 10, maxEntriesPerOwner: 11 })).toThrow(/maxEntriesPerOwner must be at most maxEntries \(10\); got 11/);
  });
});

describe('the owner of a label PDF link', () => {
  const link = (credential: LabelsPdfDownload['credential'], plpId: string): LabelsPdfDownload => ({ plpId, credential });

  it('is the seller the marketplace checks: e-mails made up beside one user token are one owner, two e-mails beside one API key two', async () => {
    const links = createDownloadStore<LabelsPdfDownload>({ ttlMs: 1000, now: () => 0, maxEntries: 100, maxEntriesPerOwner: 2, ownerOf: linkOwnerOf });
    const first = await links.issue(link({ userToken: 'token', email: 'a@example.com' }, 'plp-1'));
    await links.issue(link({ userToken: 'token', email: 'b@example.com' }, 'plp-2'));
    await links.issue(link({ userToken: 'token', email: 'c@example.com' }, 'plp-3'));
    // Three links of one owner holding at most two: its oldest went.
    expect(await links.find(first.id)).toBeUndefined();
    const keyed = await links.issue(link({ apiKey: 'key', email: 'a@example.com' }, 'plp-1'));
    await links.issue(link({ apiKey: 'key', email: 'b@example.com' }, 'plp-2'));
    await links.issue(link({ apiKey: 'key', email: 'b@example.com' }, 'plp-3'));
    expect(await links.find(keyed.id)).toBeDefined();
  });
});
