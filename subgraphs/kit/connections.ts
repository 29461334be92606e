import { badUserInput } from './errors.ts';
import { decodeCursor, encodeCursor } from './cursors.ts';

/**
 * Relay-style connections over the upstreams' pagination styles. Every subgraph declares the same
 * shareable page info in its SDL:
 *
 *   type PageInfo @shareable { hasNextPage: Boolean! endCursor: String }
 */
export interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Connection<T> {
  edges: Edge<T>[];
  pageInfo: PageInfo;
  totalCount?: number | null;
}

export interface OffsetWindow {
  /** Items to skip from the start of the list. */
  offset: number;
  /** Items wanted. */
  limit: number;
}

/**
 * Reads `first`/`after` for a list paged by number: `first` within 1..max (default when absent),
 * `after` a cursor this list issued. Throws BAD_USER_INPUT naming the argument.
 */
export function offsetWindow(kind: string, args: { first?: number | null; after?: string | null }, { defaultSize, maxSize }: { defaultSize: number; maxSize: number }): OffsetWindow {
  const limit = args.first ?? defaultSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxSize) throw badUserInput('first', `must be from 1 to ${maxSize}; got ${limit}`);
  if (!args.after) return { offset: 0, limit };
  const { o } = decodeCursor<{ o: unknown }>(args.after, kind);
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0) throw badUserInput('after', 'is not a cursor this graph issued for this list');
  return { offset: o + 1, limit };
}

/**
 * The upstream pages (numbered from `firstPage`, of `pageSize` items) that cover a window. With
 * a window aligned to the page size, as clients paging with a constant `first` always are, it is
 * exactly one page.
 */
export function pagesCovering({ offset, limit }: OffsetWindow, pageSize: number, firstPage: 0 | 1): number[] {
  const first = Math.floor(offset / pageSize);
  const last = Math.floor((offset + limit - 1) / pageSize);
  return Array.from({ length: last - first + 1 }, (_, index) => first + index + firstPage);
}

/** Builds a connection from the items at `offset`, with cursors that encode each item's position. */
export function offsetConnection<T>(kind: string, items: readonly T[], { offset, hasNextPage, totalCount }: { offset: number; hasNextPage: boolean; totalCount?: number | null }): Connection<T> {
  const edges = items.map((node, index) => ({ cursor: encodeCursor(kind, { o: offset + index }), node }));
  return {
    edges,
    pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null },
    ...(totalCount !== undefined ? { totalCount } : {}),
  };
}
