import { describe, expect, it } from 'vitest';
import { offsetConnection, offsetWindow, pagesCovering } from '../../subgraphs/kit/connections.ts';

describe('offset connections', () => {
  it('reads first/after and refuses out-of-range sizes', () => {
    expect(offsetWindow('things', {}, { defaultSize: 15, maxSize: 100 })).toEqual({ offset: 0, limit: 15 });
    const page = offsetConnection('things', ['a', 'b'], { offset: 0, hasNextPage: true });
    expect(offsetWindow('things', { first: 2, after: page.pageInfo.endCursor }, { defaultSize: 15, maxSize: 100 })).toEqual({ offset: 2, limit: 2 });
    expect(() => offsetWindow('things', { first: 101 }, { defaultSize: 15, maxSize: 100 })).toThrow(/first/);
    expect(() => offsetWindow('things', { first: 0 }, { defaultSize: 15, maxSize: 100 })).toThrow(/first/);
    expect(() => offsetWindow('other', { after: page.pageInfo.endCursor }, { defaultSize: 15, maxSize: 100 })).toThrow(/cursor/);
  });

  it('covers an aligned window with one page and an unaligned one with two', () => {
    expect(pagesCovering({ offset: 20, limit: 10 }, 10, 1)).toEqual([3]);
    expect(pagesCovering({ offset: 25, limit: 10 }, 10, 0)).toEqual([2, 3]);
  });
});
