import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { z } from 'zod';
import { QUICK_READERS } from '../../subgraphs/recognition/client.ts';
import { QUICK_READERS as MARKETPLACE_READERS } from '../../subgraphs/marketplace/client.ts';
import { seedMarketplace } from '../../emulators/marketplace/data.ts';
import { MAX_LIST_ITEMS, parseAnswer, UNUSUAL } from '../../subgraphs/kit/shapes.ts';
import { seedRecognition } from '../../emulators/recognition/data.ts';
import { presentCatalogueEntry, presentRedemption, presentReward, presentUser } from '../../emulators/recognition/presenters.ts';

const where = { service: 'recognition', operation: 'listRewards', status: 200 };

/** What reading a body gives: its value, or the error's message. */
function outcome<T>(shape: z.ZodType<T>, body: unknown, read?: (body: unknown) => T) {
  try {
    return { value: parseAnswer(shape, body, where, read) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Holds a reader to its shape over generated bodies: the same value, or the same error, for each. */
function holdsToShape<T>({ shape, read }: { shape: z.ZodType<T>; read: (body: unknown) => T }, bodies: fc.Arbitrary<unknown>): void {
  fc.assert(
    fc.property(bodies, (body) => {
      expect(outcome(shape, body, read)).toStrictEqual(outcome(shape, body));
    }),
    { numRuns: 2000 },
  );
}

// Every kind of value a field may hold in a broken or quirky answer; text and null the likeliest,
// so that whole answers of the usual form, the quick readers' own, come up often too.
const field = fc.oneof(
  { arbitrary: fc.string({ maxLength: 6 }), weight: 12 },
  { arbitrary: fc.constant(null), weight: 3 },
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.constantFrom('12', ' 3.5 ', '', 'true'),
  fc.record({ text: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null), fc.integer()), html: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null)) }, { requiredKeys: [] }),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
);
const denomination = fc.oneof(fc.record({ id: field, name: field, price: field, display_price: field }, { requiredKeys: [] }), field);
const catalogReward = fc.oneof(
  fc.record(
    { name: field, image_url: field, minimum_display_price: field, description: field, disclaimer_html: field, warning: field, denominations: fc.oneof(fc.array(denomination, { maxLength: 3 }), field) },
    { requiredKeys: [] },
  ),
  field,
);
const group = fc.record(
  { type: field, name: field, rewards: fc.oneof(fc.array(catalogReward, { maxLength: 3 }), fc.record({ items: fc.oneof(fc.array(catalogReward, { maxLength: 3 }), field) }), field) },
  { requiredKeys: [] },
);
const reward = fc.record(
  { id: field, name: field, price: field, display_price: field, description: field, image_url: field, disclaimer_html: field, warning: field, quantity: field, type: field },
  { requiredKeys: [] },
);

const redemption = fc.record(
  {
    id: field,
    created_at: field,
    state: field,
    certificate_url: field,
    claim_url: field,
    auto_approvable: field,
    reward_details: fc.oneof(fc.record({ id: field, name: field, price: field, display_price: field, type: field, image_url: field }, { requiredKeys: [] }), field),
  },
  { requiredKeys: [] },
);

// Answers of the usual form only, every field within its type, so the quick readers read them whole.
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(arbitrary, fc.constant(null), fc.constant(undefined));
const usualText = fc.oneof(fc.string({ maxLength: 6 }), fc.integer());
const usualRichText = optional(fc.oneof(fc.string({ maxLength: 6 }), fc.record({ text: optional(usualText), html: optional(usualText) }, { requiredKeys: [] })));
const usualDenomination = fc.record({ id: fc.oneof(fc.string({ minLength: 1, maxLength: 4 }), fc.integer()), name: optional(usualText), price: optional(fc.integer()), display_price: optional(usualText) }, { requiredKeys: ['id'] });
const usualCatalogReward = fc.record(
  { name: usualText, image_url: optional(usualText), minimum_display_price: optional(usualText), description: usualRichText, disclaimer_html: optional(usualText), warning: optional(usualText), denominations: fc.array(usualDenomination, { maxLength: 3 }) },
  { requiredKeys: ['name', 'denominations'] },
);
const usualCatalogue = fc.array(
  fc.record({ type: usualText, name: usualText, rewards: fc.oneof(fc.array(usualCatalogReward, { maxLength: 3 }), fc.record({ items: fc.array(usualCatalogReward, { maxLength: 3 }) })) }),
  { maxLength: 3 },
);

const usualRedemption = fc.record(
  {
    id: fc.oneof(fc.string({ minLength: 1, maxLength: 4 }), fc.integer()),
    created_at: optional(usualText),
    state: usualText,
    certificate_url: optional(usualText),
    claim_url: optional(usualText),
    auto_approvable: optional(fc.boolean()),
    reward_details: optional(
      fc.record({ id: fc.oneof(fc.string({ minLength: 1, maxLength: 4 }), fc.integer()), name: optional(usualText), price: optional(fc.integer()), display_price: optional(usualText), type: optional(usualText), image_url: optional(usualText) }, { requiredKeys: ['id'] }),
    ),
  },
  { requiredKeys: ['id', 'state'] },
);

// A user is whatever object carries an id; its other keys are read later, by `toUser`.
const user = fc.oneof(fc.record({ id: field, display_name: field, nickname: field }, { requiredKeys: [] }), field);
const leaderboardEntries = fc.array(fc.oneof(fc.record({ count: field, user }, { requiredKeys: [] }), field), { maxLength: 3 });
const usualLeaderboardEntries = fc.array(
  fc.record({ count: fc.integer(), user: fc.record({ id: fc.oneof(fc.string({ minLength: 1, maxLength: 4 }), fc.integer()), display_name: optional(usualText) }, { requiredKeys: ['id'] }), rank: fc.integer() }, { requiredKeys: ['count', 'user'] }),
  { maxLength: 3 },
);
const leaderboard = fc.oneof(leaderboardEntries, usualLeaderboardEntries, fc.record({ leaderboard: fc.oneof(leaderboardEntries, usualLeaderboardEntries, field) }, { requiredKeys: [] }), field);

const list = <T>(item: fc.Arbitrary<T>) => fc.oneof(fc.array(item, { maxLength: 3 }), field);
const keyValue = fc.oneof(fc.record({ key: field, value: field }, { requiredKeys: [] }), field);
const product = fc.record(
  {
    sku: field,
    name: field,
    description: field,
    status: field,
    qty: field,
    price: field,
    promotional_price: field,
    cost: field,
    brand: field,
    ean: field,
    categories: list(fc.oneof(fc.record({ code: field, name: field }, { requiredKeys: [] }), field)),
    images: list(field),
    specifications: list(keyValue),
    variations: list(fc.oneof(fc.record({ sku: field, qty: field, ean: field, images: list(field), specifications: list(keyValue) }, { requiredKeys: [] }), field)),
    variation_attributes: list(field),
  },
  { requiredKeys: [] },
);
const usualList = <T>(item: fc.Arbitrary<T>) => fc.oneof(fc.array(item, { maxLength: 3 }), fc.constant(null), fc.constant(undefined));
const usualKeyValue = fc.record({ key: usualText, value: optional(usualText) });
const usualProduct = fc.record({
  sku: usualText,
  name: optional(usualText),
  qty: optional(fc.integer()),
  price: optional(fc.double({ noNaN: true, noDefaultInfinity: true })),
  promotional_price: optional(fc.integer()),
  brand: optional(usualText),
  categories: usualList(fc.record({ code: optional(usualText), name: optional(usualText) }, { requiredKeys: [] })),
  images: usualList(usualText),
  specifications: usualList(usualKeyValue),
  variations: usualList(fc.record({ sku: usualText, qty: optional(fc.integer()), ean: optional(usualText), images: usualList(usualText), specifications: usualList(usualKeyValue) }, { requiredKeys: ['sku'] })),
  variation_attributes: usualList(usualText),
});

describe('quick readers of hot recognition answers', () => {
  const seeded = seedRecognition(Date.now());

  it('read the catalogue exactly as its zod shape does, value or error, whatever the body', () => {
    holdsToShape(QUICK_READERS.catalogue, fc.oneof(fc.array(group, { maxLength: 3 }), field, usualCatalogue));
  });

  it('read a reward exactly as its zod shape does, value or error, whatever the body', () => {
    holdsToShape(QUICK_READERS.reward, fc.oneof(reward, field));
  });

  it('read a redemption exactly as its zod shape does, value or error, whatever the body', () => {
    holdsToShape(QUICK_READERS.redemption, fc.oneof(redemption, field, usualRedemption));
  });

  it('read a leaderboard exactly as its zod shape does, value or error, whatever the body', () => {
    holdsToShape(QUICK_READERS.leaderboard, leaderboard);
    const { users } = seeded;
    const presented = users.slice(0, 20).map((entry, index) => ({ count: 20 - index, user: presentUser(entry, users[0]!) }));
    for (const body of [presented, { leaderboard: presented }]) expect(QUICK_READERS.leaderboard.read(body)).toStrictEqual(QUICK_READERS.leaderboard.shape.parse(body));
  });

  it('read a marketplace product exactly as its zod shape does, value or error, whatever the body', () => {
    const { shape, read } = MARKETPLACE_READERS.product;
    holdsToShape(MARKETPLACE_READERS.product, fc.oneof(product, field, usualProduct));
    for (const seeded of seedMarketplace(Date.now()).products) expect(read(seeded)).toStrictEqual(shape.parse(seeded));
    // Every list of a product, at the most items a list may hold and at one more.
    for (const length of [MAX_LIST_ITEMS, MAX_LIST_ITEMS + 1]) {
      const strings = Array.from({ length }, (_, index) => `i${index}`);
      const pairs = strings.map((key) => ({ key, value: key }));
      for (const body of [
        { sku: 's', images: strings },
        { sku: 's', variation_attributes: strings },
        { sku: 's', specifications: pairs },
        { sku: 's', categories: pairs.map(({ key }) => ({ code: key })) },
        { sku: 's', variations: strings.map((sku) => ({ sku })) },
        { sku: 's', variations: [{ sku: 'v', images: strings, specifications: pairs }] },
      ]) {
        expect(outcome(shape, body, read)).toStrictEqual(outcome(shape, body));
        expect(outcome(shape, body, read)).toHaveProperty(length > MAX_LIST_ITEMS ? 'error' : 'value');
      }
    }
  });

  it('read a page of marketplace products exactly as its zod shape does, value or error, whatever the body', () => {
    const { shape, read } = MARKETPLACE_READERS.products;
    const pages = fc.record({ products: fc.oneof(fc.array(fc.oneof(product, usualProduct, field), { maxLength: 3 }), field), total: field, next: field }, { requiredKeys: [] });
    const usualPages = fc.record({ products: fc.array(usualProduct, { maxLength: 3 }), total: optional(fc.integer()), next: optional(usualText) }, { requiredKeys: ['products'] });
    holdsToShape(MARKETPLACE_READERS.products, fc.oneof(pages, usualPages, field));
    const products = seedMarketplace(Date.now()).products;
    const page = { products: products.slice(0, 10), total: products.length, next: 'https://mkt.example/products?page=2' };
    expect(read(page)).toStrictEqual(shape.parse(page));
    // The service's largest page, and one product more.
    for (const length of [100, 101]) {
      const body = { products: Array.from({ length }, (_, index) => ({ sku: `s${index}` })), total: length, next: null };
      expect(outcome(shape, body, read)).toStrictEqual(outcome(shape, body));
      expect(outcome(shape, body, read)).toHaveProperty(length > 100 ? 'error' : 'value');
    }
  });

  it('read the emulated service’s catalogue and rewards themselves, without handing them to zod', () => {
    const { catalogue, redemptions } = seeded;
    const body = ['gift_card', 'donation', 'company'].map((type) => ({ type, name: type, rewards: { items: catalogue.filter((item) => item.type === type).map((item) => presentCatalogueEntry(item, 'US')) } }));
    expect(QUICK_READERS.catalogue.read(body)).toStrictEqual(QUICK_READERS.catalogue.shape.parse(body));
    // The real service sends a group's rewards as the array itself.
    const bare = body.map((entry) => ({ ...entry, rewards: entry.rewards.items }));
    expect(QUICK_READERS.catalogue.read(bare)).toStrictEqual(QUICK_READERS.catalogue.shape.parse(bare));
    const item = catalogue[0]!;
    const one = presentReward(item, item.denominations[0]!, null);
    expect(QUICK_READERS.reward.read(one)).toStrictEqual(QUICK_READERS.reward.shape.parse(one));
    for (const redemption of redemptions.slice(0, 5)) {
      const item = catalogue.find((entry) => entry.denominations.some((denomination) => denomination.id === redemption.reward_id))!;
      const presented = presentRedemption(redemption, item, item.denominations.find((denomination) => denomination.id === redemption.reward_id)!);
      expect(QUICK_READERS.redemption.read(presented)).toStrictEqual(QUICK_READERS.redemption.shape.parse(presented));
    }
  });

  it('read hostile answers as the shapes do: prototype keys, deep nesting, a catalogue of the most rewards a list may hold and of one more', () => {
    const { shape, read } = QUICK_READERS.catalogue;
    const rewards = (length: number) => Array.from({ length }, (_, index) => ({ name: `r${index}`, description: 'd', denominations: [{ id: index, price: index }] }));
    const hostile = [
      JSON.parse('[{"type":"t","name":"n","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"rewards":[{"name":"r","__proto__":{"polluted":true},"denominations":[]}]}]'),
      JSON.parse(`${'['.repeat(10_000)}${']'.repeat(10_000)}`),
      JSON.parse(`[{"type":"t","name":"n","rewards":{"items":${'['.repeat(5_000)}${']'.repeat(5_000)}}}]`),
      [{ type: 't', name: 'n', rewards: rewards(MAX_LIST_ITEMS) }],
      [{ type: 't', name: 'n', rewards: rewards(MAX_LIST_ITEMS + 1) }],
      [{ type: 't', name: 'n', rewards: { items: rewards(MAX_LIST_ITEMS + 1) } }],
      [{ type: 't', name: 'n', rewards: [{ name: 'r', denominations: Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, index) => ({ id: index })) }] }],
      Array.from({ length: MAX_LIST_ITEMS + 1 }, () => ({ type: 't', name: 'n', rewards: [] })),
    ];
    for (const body of hostile) expect(outcome(shape, body, read)).toStrictEqual(outcome(shape, body));
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(read(hostile[3])[0]!.rewards).toHaveLength(MAX_LIST_ITEMS);
    for (const body of hostile.slice(4)) {
      expect(() => read(body)).toThrow(UNUSUAL);
      expect(outcome(shape, body, read)).toMatchObject({ error: expect.stringContaining(`Too big: expected array to have <=${MAX_LIST_ITEMS} items`) });
    }
  });

  it('read hostile redemptions as the shape does: prototype keys, nesting 10,000 deep where a field or the details should be', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const hostile = [
      JSON.parse('{"id":"rd1","state":"s","__proto__":{"polluted":true},"reward_details":{"id":"r","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}'),
      JSON.parse(`{"id":${deep},"state":"s"}`),
      JSON.parse(`{"id":"rd1","state":"s","reward_details":${deep}}`),
      JSON.parse(`{"id":"rd1","state":"s","reward_details":{"id":"r","name":${deep}}}`),
      JSON.parse(deep),
    ];
    for (const body of hostile) expect(outcome(QUICK_READERS.redemption.shape, body, QUICK_READERS.redemption.read)).toStrictEqual(outcome(QUICK_READERS.redemption.shape, body));
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(QUICK_READERS.redemption.read(hostile[0])).toMatchObject({ id: 'rd1', reward_details: { id: 'r' } });
  });

  it('read hostile leaderboards as the shape does: prototype keys, nesting 10,000 deep where a count, a user or the list should be, the most entries a list may hold and one more', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const { shape, read } = QUICK_READERS.leaderboard;
    const hostile = [
      JSON.parse('[{"count":1,"__proto__":{"polluted":true},"user":{"id":"u1","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}]'),
      JSON.parse(`[{"count":${deep},"user":{"id":"u1"}}]`),
      JSON.parse(`[{"count":1,"user":${deep}}]`),
      JSON.parse(`{"leaderboard":${deep}}`),
      JSON.parse(deep),
      Array.from({ length: MAX_LIST_ITEMS }, (_, index) => ({ count: index, user: { id: `u${index}` } })),
      Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, index) => ({ count: index, user: { id: `u${index}` } })),
      { leaderboard: Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, index) => ({ count: index, user: { id: `u${index}` } })) },
    ];
    for (const body of hostile) expect(outcome(shape, body, read)).toStrictEqual(outcome(shape, body));
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(read(hostile[0])).toMatchObject([{ count: 1, user: { id: 'u1' } }]);
    expect(read(hostile[5])).toHaveLength(MAX_LIST_ITEMS);
    for (const body of hostile.slice(6)) expect(() => read(body)).toThrow(UNUSUAL);
  });

  it('read lists of a million bad items as the shapes do: refused whole past the cap, else at the first item', () => {
    const refusal = (reader: { shape: z.ZodType<unknown>; read: (body: unknown) => unknown }, body: unknown) => {
      const { error } = outcome(reader.shape, body, reader.read);
      expect(outcome(reader.shape, body)).toStrictEqual({ error });
      return error;
    };
    for (const item of [{}, null, 1]) {
      const million = Array.from({ length: 1_000_000 }, () => item);
      const most = million.slice(0, MAX_LIST_ITEMS);
      const tooBig = `Too big: expected array to have <=${MAX_LIST_ITEMS} items`;
      expect(refusal(QUICK_READERS.leaderboard, million)).toContain(`the body: ${tooBig}`);
      expect(refusal(QUICK_READERS.leaderboard, { leaderboard: million })).toContain(`leaderboard: ${tooBig}`);
      expect(refusal(QUICK_READERS.catalogue, million)).toContain(`the body: ${tooBig}`);
      expect(refusal(QUICK_READERS.catalogue, [{ type: 't', name: 'n', rewards: most }])).toMatch(/\(\[0\]\.rewards\[0\][.:][^;]*\)$/);
      expect(refusal(MARKETPLACE_READERS.product, { sku: 's', specifications: most })).toMatch(/\(specifications\[0\][.:][^;]*\)$/);
      expect(refusal(MARKETPLACE_READERS.product, { sku: 's', variations: most })).toMatch(/\(variations\[0\][.:][^;]*\)$/);
    }
  });

  it('hand what they do not know to the shape', () => {
    expect(() => QUICK_READERS.reward.read({ id: 'r1', name: 'A reward', price: '12' })).toThrow(UNUSUAL);
    expect(outcome(QUICK_READERS.reward.shape, { id: 'r1', name: 'A reward', price: '12' }, QUICK_READERS.reward.read)).toMatchObject({ value: { price: 12 } });
    expect(() => QUICK_READERS.redemption.read({ id: 'rd1', state: 'approved', auto_approvable: 'true' })).toThrow(UNUSUAL);
    expect(outcome(QUICK_READERS.redemption.shape, { id: 'rd1', state: 'approved', auto_approvable: 'true' }, QUICK_READERS.redemption.read)).toMatchObject({ value: { auto_approvable: true } });
  });
});
