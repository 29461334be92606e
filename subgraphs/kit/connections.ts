import { createHash } from 'node:crypto';
import { badUserInput } from './errors.ts';
import { decodeCursor, encodeCursor, type CursorSigner } from './cursors.ts';

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

/** `first` within 1..max, or the default when absent. */
function pageSize(first: number | null | undefined, { defaultSize, maxSize }: { defaultSize: number; maxSize: number }): number {
  const limit = first ?? defaultSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxSize) throw badUserInput('first', `must be from 1 to ${maxSize}; got ${limit}`);
  return limit;
}

const MAX_OFFSET = 2 ** 31 - 1;

/**
 * Reads `first`/`after` for a list paged by number: `first` within 1..max (default when absent),
 * `after` a cursor this list issued. Throws BAD_USER_INPUT naming the argument.
 */
export function offsetWindow(kind: string, args: { first?: number | null; after?: string | null }, sizes: { defaultSize: number; maxSize: number }): OffsetWindow {
  const limit = pageSize(args.first, sizes);
  if (!args.after) return { offset: 0, limit };
  const { o } = decodeCursor<{ o: unknown }>(args.after, kind);
  // No list this graph pages holds more items than a 32-bit page number reaches; a forged offset
  // past that would go upstream as `page=5e+306`.
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0 || o >= MAX_OFFSET) throw badUserInput('after', 'is not a cursor this graph issued for this list');
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

/** One page of a list the upstream pages forward only, with a cursor or a next-page URL. */
export interface ForwardPage<T> {
  items: T[];
  /** The upstream's token for the following page; null on the last page. */
  next: string | null;
}

export interface ForwardListOptions<T> {
  defaultSize: number;
  maxSize: number;
  /**
   * The filters of the first page, by argument name. The upstream keeps them inside its own token,
   * so a cursor refuses to continue under different ones instead of silently ignoring them.
   */
  filters: Record<string, string | null>;
  /** The first page (token null), or the page an upstream token points to. */
  fetchPage(token: string | null): Promise<ForwardPage<T>>;
  /**
   * An item's identity within the list: a cursor inside a page finds its place again by it, as
   * items shown may have been removed from that page (or others inserted) before the next request.
   */
  idOf(item: T): string;
  /** Upstream pages one call may read to fill `first`. @default 10 */
  maxPages?: number;
  /** Signs the cursors: they carry upstream tokens, which go back upstream as they are. */
  signer: CursorSigner;
}

interface ForwardPosition {
  /** The upstream token of the page to read (null: the first page). */
  t: string | null;
  /** Items of that page already seen. */
  s: number;
  /** Identity of the last item seen, inside a page only (absent from cursors issued before it was kept). */
  l?: string;
  /** Identity of the item that followed it in the page when the cursor was issued, if any. */
  n?: string;
}

/**
 * A short id as it is (ids are in the answer anyway, and hashing every edge of every page would
 * cost the hot list more than the cursor saves); a long one as 48 bits of SHA-256, so the cursor
 * stays small whatever the ids look like: two items of one page (at most `maxSize`) sharing a
 * digest is too unlikely to matter, and a digest never equals a short id (it starts with `#`).
 */
const identity = (id: string): string => (id.length <= 24 && !id.startsWith('#') ? id : `#${createHash('sha256').update(id).digest('base64url').slice(0, 8)}`);

function forwardPosition(after: string, kind: string, filters: Record<string, string | null>, signer: CursorSigner): ForwardPosition {
  const cursor = signer.open<{ t: unknown; s: unknown; f: unknown; l?: unknown; n?: unknown }>(after, kind);
  const seen = cursor.f && typeof cursor.f === 'object' ? (cursor.f as Record<string, unknown>) : undefined;
  const digest = (value: unknown) => value === undefined || typeof value === 'string';
  if ((cursor.t !== null && typeof cursor.t !== 'string') || typeof cursor.s !== 'number' || !Number.isInteger(cursor.s) || cursor.s < 0 || !seen || !digest(cursor.l) || !digest(cursor.n)) {
    throw badUserInput('after', 'is not a cursor this graph issued for this list');
  }
  for (const [name, value] of Object.entries(filters)) {
    const first = seen[name] ?? null;
    if (first !== value) {
      throw badUserInput(name, `must stay ${JSON.stringify(first)} as on the first page: the upstream keeps the first page's filters in its cursor. To change the filter, start again without \`after\``);
    }
  }
  return { t: cursor.t, s: cursor.s, ...(typeof cursor.l === 'string' ? { l: cursor.l } : {}), ...(typeof cursor.n === 'string' ? { n: cursor.n } : {}) };
}

/**
 * Where to go on in the page a cursor points into, read again: the upstream's token points at
 * the page, not at a place in it, and the page may have changed since (an item shown deleted, by
 * this graph's own deleteQuestion, or one inserted).
 */
function resumeAt<T>({ s, l, n }: ForwardPosition, items: readonly T[], idOf: (item: T) => string): number {
  // Issued before identities were kept, or at the start of a page: the position is all there is.
  if (l === undefined) return s;
  const digests = items.map((item) => identity(idOf(item)));
  const last = digests.indexOf(l);
  if (last >= 0) return last + 1;
  const next = n === undefined ? -1 : digests.indexOf(n);
  if (next >= 0) return next;
  // Both gone, and any item shown before them may be gone too: only the page's start is sure to
  // skip nothing. Repeating beats skipping: a repeated item is in plain sight and a client can
  // drop it by its id, while a skipped one is lost without anyone noticing.
  return 0;
}

/**
 * A connection over an upstream that pages forward only. Each edge's cursor holds the upstream
 * token of its page, its place in that page (the identities of the item and of the one after it) and
 * the filters; the last edge of a page points straight at the next page, so a client paging with
 * the upstream's page size costs one call per page.
 * The caller vets tokens before they get here: they must hold no credential. The cursors are
 * signed: a client cannot edit the token (a forged page size or filter would reach the upstream).
 */
export async function forwardConnection<T>(kind: string, args: { first?: number | null; after?: string | null }, options: ForwardListOptions<T>): Promise<Connection<T>> {
  const { filters, fetchPage, idOf, maxPages = 10, signer } = options;
  const limit = pageSize(args.first, options);
  let position: ForwardPosition = args.after ? forwardPosition(args.after, kind, filters, signer) : { t: null, s: 0 };
  const edges: Edge<T>[] = [];
  const cursorAt = (at: ForwardPosition) => signer.sign(kind, { ...at, f: filters });
  let hasNextPage = false;
  for (let pages = 1; ; pages += 1) {
    const token = position.t;
    const page = await fetchPage(token);
    let index = pages === 1 ? resumeAt(position, page.items, idOf) : 0;
    while (index < page.items.length && edges.length < limit) {
      const node = page.items[index]!;
      index += 1;
      if (index >= page.items.length && page.next) position = { t: page.next, s: 0 };
      else position = { t: token, s: index, l: identity(idOf(node)), ...(index < page.items.length ? { n: identity(idOf(page.items[index]!)) } : {}) };
      edges.push({ cursor: cursorAt(position), node });
    }
    if (index < page.items.length) {
      hasNextPage = true;
      break;
    }
    if (!page.next) break;
    position = { t: page.next, s: 0 };
    if (edges.length >= limit || pages >= maxPages) {
      hasNextPage = true;
      break;
    }
  }
  return { edges, pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? (hasNextPage ? cursorAt(position) : null) } };
}

/** One page of a list the upstream pages by number. */
export interface NumberedPage<T> {
  items: T[];
  /** The whole list's length, when the upstream tells it. */
  totalCount?: number | null;
}

export interface NumberedListOptions<T> {
  defaultSize: number;
  maxSize: number;
  /** The number of the upstream's first page. */
  firstPage: 0 | 1;
  /**
   * The upstream's page size when it is fixed (the messaging service's 100): a window then spans one
   * page, or two when it is not aligned. @default the window's own size
   */
  fixedPageSize?: number;
  fetchPage(page: number, pageSize: number): Promise<NumberedPage<T>>;
}

/**
 * A connection over an upstream paged by number. `first` and `after` are checked before any call;
 * pages are read at the window's own size, so a client paging with a constant `first` costs one
 * call per page.
 */
export async function pageNumberedConnection<T>(
  kind: string,
  args: { first?: number | null; after?: string | null },
  options: NumberedListOptions<T>,
): Promise<Connection<T> & { totalCount: number | null }> {
  const { firstPage, fetchPage } = options;
  const window = offsetWindow(kind, args, options);
  const size = options.fixedPageSize ?? window.limit;
  const pages = pagesCovering(window, size, firstPage);
  const fetched = await Promise.all(pages.map((page) => fetchPage(page, size)));
  const start = window.offset - (pages[0]! - firstPage) * size;
  const all = fetched.flatMap((page) => page.items);
  const items = all.slice(start, start + window.limit);
  const last = fetched.at(-1)!;
  const totalCount = last.totalCount ?? null;
  // Without a total, a full last page may be followed by more. An empty window ends the list
  // whatever total the service claims (rows deleted between its count and its read): `hasNextPage`
  // with no edge would leave a client no cursor to go on from. A short page does not end it: a
  // service may serve fewer than asked.
  const hasNextPage = items.length > 0 && (totalCount !== null ? window.offset + items.length < totalCount : all.length > start + window.limit || last.items.length === size);
  return { ...offsetConnection(kind, items, { offset: window.offset, hasNextPage }), totalCount };
}
