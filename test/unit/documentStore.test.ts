import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDocumentStore, documentBytes } from '../../lib/documentStore.ts';

describe("Apollo Server's document store", () => {
  it('counts the source text a document keeps, comments included, and its tokens', () => {
    const padded = parse(`{ __typename } # ${'x'.repeat(100_000)}`);
    // Apollo's default counted its JSON: a few hundred bytes.
    expect(Buffer.byteLength(JSON.stringify(padded))).toBeLessThan(500);
    expect(documentBytes(padded)).toBeGreaterThan(100_000);
    // Two bytes a character once one is beyond Latin-1, as V8 keeps it.
    expect(documentBytes(parse(`{ __typename } # €${'x'.repeat(100_000)}`))).toBeGreaterThan(200_000);
    // About 400 bytes a token besides the text (330 to 390 measured).
    const wide = parse(`{ ${Array.from({ length: 100 }, (_, index) => `a${index}: __typename`).join(' ')} }`);
    expect(documentBytes(wide)).toBeGreaterThan(300 * 300);
  });

  it('stays within its entries and bytes, the oldest out first', async () => {
    const store = createDocumentStore({ maxEntries: 100, maxBytes: 1024 * 1024 });
    for (let index = 0; index < 50; index += 1) await store.set(`key${index}`, parse(`query Q${index} { __typename } # ${'x'.repeat(100_000)}`));
    expect(store.size).toBe(10);
    expect(store.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(await store.get('key0')).toBeUndefined();
    expect(await store.get('key49')).toBeDefined();
    const small = createDocumentStore({ maxEntries: 3, maxBytes: 1024 * 1024 });
    for (let index = 0; index < 5; index += 1) await small.set(`key${index}`, parse(`{ a${index}: __typename }`));
    expect(small.size).toBe(3);
  });
});
