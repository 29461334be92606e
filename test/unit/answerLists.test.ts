import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { capped, describeIssues, identifier, listOf, MAX_LIST_ITEMS, optNum, optText, parseAnswer, text } from '../../subgraphs/kit/shapes.ts';

/**
 * `listOf`, the kit's list in an answer: what `z.array` reads, it reads to the same value, and what
 * `z.array` refuses, it refuses in the same words for the first bad item, without reading past it;
 * a list longer than its cap is refused before any item is read.
 */
const item = z.object({ id: identifier, name: text, count: optNum, note: optText });
const where = { service: 'stub', operation: 'listThings', status: 200 };

/** Whatever `safeParse` gives: the value, or the issues as zod finalized them. */
function outcome(shape: z.ZodType, body: unknown) {
  const result = shape.safeParse(body);
  return result.success ? { value: result.data } : { issues: result.error.issues };
}

/** An item that counts how often it is read. */
function counted(accept: (value: unknown) => boolean) {
  const seen = { reads: 0 };
  const shape = z.custom((value) => {
    seen.reads += 1;
    return accept(value);
  });
  return { seen, shape };
}

const field = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null), fc.constant(undefined), fc.boolean(), fc.constantFrom('12', ''), fc.array(fc.string(), { maxLength: 2 }));
const entry = fc.oneof({ arbitrary: fc.record({ id: field, name: field, count: field, note: field }, { requiredKeys: [] }), weight: 4 }, field);

describe('listOf, a list in an answer', () => {
  it('reads what z.array reads to the same value, and refuses what it refuses with the same issues for the first bad item', () => {
    const shapes = [
      [listOf(item), z.array(item)],
      [z.object({ things: listOf(item) }), z.object({ things: z.array(item) })],
      [z.object({ things: listOf(item).nullish() }), z.object({ things: z.array(item).nullish() })],
      [z.union([listOf(item), z.object({ items: listOf(item) })]), z.union([z.array(item), z.object({ items: z.array(item) })])],
    ] as const;
    const bodies = fc.oneof(fc.array(entry, { maxLength: 6 }), field, fc.record({ things: fc.oneof(fc.array(entry, { maxLength: 6 }), field) }, { requiredKeys: [] }), fc.record({ items: fc.array(entry, { maxLength: 6 }) }));
    // A body with each list cut after its first bad item: what z.array says of it is all ours may say.
    const cut = (list: unknown) => (Array.isArray(list) ? list.slice(0, list.findIndex((entry) => !item.safeParse(entry).success) + 1 || list.length) : list);
    const firstBadOnly = (body: unknown) => {
      if (Array.isArray(body)) return cut(body);
      if (!body || typeof body !== 'object') return body;
      const { things, items } = body as { things?: unknown; items?: unknown };
      return { ...body, ...('things' in body ? { things: cut(things) } : {}), ...('items' in body ? { items: cut(items) } : {}) };
    };
    fc.assert(
      fc.property(bodies, (body) => {
        for (const [list, array] of shapes) expect(outcome(list, body)).toStrictEqual(outcome(array, firstBadOnly(body)));
      }),
      { numRuns: 3000 },
    );
  });

  it('words its refusals as z.array does: no list, an absent one, too many items', () => {
    const tooMany = Array.from({ length: 3 }, (_, index) => ({ id: index, name: 'n' }));
    for (const body of [{ things: 'x' }, {}, { things: null }, { things: tooMany }, { things: [{ id: 1, name: 'n' }, { id: 2 }] }]) {
      expect(describeIssues((listOf(item, 2).safeParse((body as { things?: unknown }).things).error?.issues) ?? [])).toBe(
        describeIssues(z.array(item).max(2).safeParse((body as { things?: unknown }).things).error?.issues ?? []),
      );
      expect(outcome(z.object({ things: listOf(item, 2) }), body)).toStrictEqual(outcome(z.object({ things: z.array(item).max(2) }), body));
    }
  });

  it('refuses a list past its cap before reading any item, and reads one at the cap whole', () => {
    const { seen, shape } = counted(() => true);
    const list = listOf(shape, 5);
    expect(list.safeParse([1, 2, 3, 4, 5]).data).toEqual([1, 2, 3, 4, 5]);
    expect(seen.reads).toBe(5);
    seen.reads = 0;
    expect(describeIssues(list.safeParse([1, 2, 3, 4, 5, 6]).error!.issues)).toBe('the body: Too big: expected array to have <=5 items');
    expect(seen.reads).toBe(0);
    expect(() => parseAnswer(listOf(item), Array.from({ length: MAX_LIST_ITEMS + 1 }, () => ({})), where)).toThrow(
      `stub: listThings answered a body of the wrong shape (the body: Too big: expected array to have <=${MAX_LIST_ITEMS} items)`,
    );
  });

  it('stops at the first bad item of a long list: no item after it read, one issue', () => {
    const { seen, shape } = counted((value) => value !== null);
    const result = listOf(shape).safeParse([1, 2, null, ...Array.from({ length: MAX_LIST_ITEMS - 3 }, () => null)]);
    expect(result.error!.issues).toHaveLength(1);
    expect(result.error!.issues[0]!.path).toEqual([2]);
    expect(seen.reads).toBe(3);
  });

  it('names the first of a million bad items at once, with no "and N more", whatever the items', () => {
    for (const bad of [{}, null, 1, 'x', []]) {
      const body = { things: Array.from({ length: MAX_LIST_ITEMS }, () => bad) };
      let message = '';
      try {
        parseAnswer(z.object({ things: listOf(item) }), body, where);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^stub: listThings answered a body of the wrong shape \(things\[0\][.:]/);
      expect(message).not.toMatch(/things\[[1-9]|more\)$/);
    }
  });

  it('keeps each item of a nested list to its own cap, and reads items as their shapes transform them', () => {
    const group = z.object({ name: text, tags: listOf(text, 3).nullish().transform((tags) => tags ?? []) });
    expect(listOf(group).parse([{ name: 1, tags: [2, 'b'] }, { name: 'n' }])).toEqual([
      { name: '1', tags: ['2', 'b'] },
      { name: 'n', tags: [] },
    ]);
    expect(describeIssues(listOf(group).safeParse([{ name: 'n' }, { name: 'm', tags: ['a', 'b', 'c', 'd'] }]).error!.issues)).toBe('[1].tags: Too big: expected array to have <=3 items');
  });
});

describe('capped, a list read whole by another shape', () => {
  it('is that shape up to the cap, and refuses a longer list before the shape reads it', () => {
    const { seen, shape } = counted(() => true);
    const first = capped(z.tuple([shape], z.unknown()), 3);
    expect(first.parse(['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(seen.reads).toBe(1);
    expect(describeIssues(first.safeParse(['a', 'b', 'c', 'd']).error!.issues)).toBe('the body: Too big: expected array to have <=3 items');
    expect(seen.reads).toBe(1);
    // Anything but a list is the shape's to word.
    for (const body of [{}, 'x', null, []]) expect(outcome(first, body)).toStrictEqual(outcome(z.tuple([z.unknown()], z.unknown()), body));
    expect(capped(z.unknown()).parse({ a: 1 })).toEqual({ a: 1 });
  });
});
