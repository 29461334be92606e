import { describe, expect, it } from 'vitest';
import { offsetConnection, offsetWindow, pageNumberedConnection, pagesCovering, type NumberedPage } from '../../subgraphs/kit/connections.ts';

describe('offset connections', () => {
  it('reads first/after and refuses out-of-range sizes', () => {
    expect(offsetWindow('things', {}, { defaultSize: 15, maxSize: 100 })).toEqual({ offset: 0, limit: 15 });
    const page = offsetConnection('things', ['a', 'b'], { offset: 0, hasNextPage: true });
    expect(offsetWindow('things', { first: 2, after: page.pageInfo.endCursor }, { defaultSize: 15, maxSize: 100 })).toEqual({ offset: 2, limit: 2 });
    expect(() => offsetWindow('things', { first: 101 }, { defaultSize: 15, maxSize: 100 })).toThrow(/first/);
    expect(() => offsetWindow('things', { first: 0 }, { defaultSize: 15, maxSize: 100 })).toThrow(/first/);
    expect(() => offsetWindow('other', { after: page.pageInfo.endCursor }, { defaultSize: 15, maxSize: 100 })).toThrow(/cursor/);
  });

  it('refuses a cursor whose offset no 32-bit page number reaches (it went upstream as page=5e+306)', () => {
    const at = (offset: number) => offsetConnection('things', ['a'], { offset, hasNextPage: true }).pageInfo.endCursor!;
    expect(offsetWindow('things', { first: 10, after: at(2 ** 31 - 2) }, { defaultSize: 15, maxSize: 100 })).toEqual({ offset: 2 ** 31 - 1, limit: 10 });
    for (const offset of [2 ** 31 - 1, 2 ** 53, 5e307]) {
      expect(() => offsetWindow('things', { first: 10, after: at(offset) }, { defaultSize: 15, maxSize: 100 }), String(offset)).toThrow(/cursor/);
    }
  });

  it('covers an aligned window with one page and an unaligned one with two', () => {
    expect(pagesCovering({ offset: 20, limit: 10 }, 10, 1)).toEqual([3]);
    expect(pagesCovering({ offset: 25, limit: 10 }, 10, 0)).toEqual([2, 3]);
  });
});

describe('page-numbered connections', () => {
  const list = Array.from({ length: 23 }, (_, index) => `item${index}`);
  function upstream({ withTotal }: { withTotal: boolean }) {
    const calls: [number, number][] = [];
    const fetchPage = async (page: number, pageSize: number): Promise<NumberedPage<string>> => {
      calls.push([page, pageSize]);
      return { items: list.slice(page * pageSize, (page + 1) * pageSize), ...(withTotal ? { totalCount: list.length } : {}) };
    };
    return { calls, options: { defaultSize: 15, maxSize: 100, firstPage: 0 as const, fetchPage } };
  }

  it('reads one page per call when the client keeps `first`, with the total from the upstream', async () => {
    const { calls, options } = upstream({ withTotal: true });
    const first = await pageNumberedConnection('things', { first: 10 }, options);
    expect(first.edges.map((edge) => edge.node)).toEqual(list.slice(0, 10));
    expect(first).toMatchObject({ totalCount: 23, pageInfo: { hasNextPage: true } });
    const second = await pageNumberedConnection('things', { first: 10, after: first.pageInfo.endCursor }, options);
    const third = await pageNumberedConnection('things', { first: 10, after: second.pageInfo.endCursor }, options);
    expect(third.edges.map((edge) => edge.node)).toEqual(list.slice(20));
    expect(third.pageInfo.hasNextPage).toBe(false);
    expect(calls).toEqual([[0, 10], [1, 10], [2, 10]]);
  });

  it('reads the two pages an unaligned window straddles, and guesses the end without a total', async () => {
    const { calls, options } = upstream({ withTotal: false });
    const start = offsetConnection('things', list.slice(0, 4), { offset: 0, hasNextPage: true });
    const window = await pageNumberedConnection('things', { first: 6, after: start.pageInfo.endCursor }, options);
    expect(window.edges.map((edge) => edge.node)).toEqual(list.slice(4, 10));
    expect(window).toMatchObject({ totalCount: null, pageInfo: { hasNextPage: true } });
    expect(calls).toEqual([[0, 6], [1, 6]]);
    const rest = await pageNumberedConnection('things', { first: 100 }, options);
    expect(rest.edges).toHaveLength(23);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });

  it('ends the list at an empty page whatever total the upstream claims, so a client is never left with more and no cursor', async () => {
    // Rows deleted between the service's count and its page read: the total says 50, the pages hold 23.
    const fetchPage = async (page: number, pageSize: number): Promise<NumberedPage<string>> => ({ items: list.slice(page * pageSize, (page + 1) * pageSize), totalCount: 50 });
    const options = { defaultSize: 15, maxSize: 100, firstPage: 0 as const, fetchPage };
    const afterTwenty = offsetConnection('things', list.slice(0, 20), { offset: 0, hasNextPage: true }).pageInfo.endCursor;
    const third = await pageNumberedConnection('things', { first: 10, after: afterTwenty }, options);
    expect(third.edges.map((edge) => edge.node)).toEqual(list.slice(20));
    expect(third.pageInfo.hasNextPage).toBe(true);
    const beyond = await pageNumberedConnection('things', { first: 10, after: third.pageInfo.endCursor }, options);
    expect(beyond).toMatchObject({ edges: [], pageInfo: { hasNextPage: false, endCursor: null }, totalCount: 50 });
  });

  it('refuses a size over the maximum before any call', async () => {
    const { calls, options } = upstream({ withTotal: true });
    await expect(pageNumberedConnection('things', { first: 101 }, options)).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT', argument: 'first' } });
    expect(calls).toEqual([]);
  });
});
