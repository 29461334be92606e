import { buildSchema, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDocumentStore, documentBytes } from '../../lib/documentStore.ts';
import { createRepeatOperations } from '../../lib/repeatOperations.ts';

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

describe('remembered operations (the pass-through, compiled repeats)', () => {
  it('are bounded by what their parses hold, not only by their count', () => {
    const schema = buildSchema('type Query { a: Int }');
    const repeats = createRepeatOperations(schema, 1000, 4 * 1024 * 1024);
    // Each within the 16 KiB text limit, and about 1.2 MB of parse: 20 fit in 4 MiB, not 1,000.
    const wide = (index: number) => `query W${index} { ${Array.from({ length: 1500 }, (_, field) => `f${field}: a`).join(' ')} }`;
    for (let index = 0; index < 100; index += 1) {
      const text = wide(index);
      const document = parse(text);
      expect(text.length).toBeLessThan(16 * 1024);
      repeats.remember(text, undefined, { operation: document.definitions[0] as OperationDefinitionNode });
    }
    expect(repeats.size).toBeGreaterThan(0);
    expect(repeats.size).toBeLessThanOrEqual(Math.floor((4 * 1024 * 1024) / documentBytes(parse(wide(0)))));
    expect(repeats.recall({ query: wide(99) }, undefined)).toBeDefined();
    expect(repeats.recall({ query: wide(0) }, undefined)).toBeUndefined();
  });
});
