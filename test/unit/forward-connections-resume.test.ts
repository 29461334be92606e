import { describe, expect, it } from 'vitest';
import { forwardConnection, type Connection, type ForwardPage } from '../../subgraphs/kit/connections.ts';
import { makeCursorSigner } from '../../subgraphs/kit/cursors.ts';

/**
 * A list the test edits between requests, served in upstream pages of five whose tokens point at
 * the next page by its first item (as a keyset cursor would), so only the page holding a cursor
 * shifts under it.
 */
function changingUpstream(initial: string[]) {
  const list = { items: [...initial] };
  const fetched: (string | null)[] = [];
  const fetchPage = async (token: string | null): Promise<ForwardPage<string>> => {
    fetched.push(token);
    const start = token === null ? 0 : list.items.indexOf(token);
    const next = list.items[start + 5] ?? null;
    return { items: list.items.slice(start, start + 5), next };
  };
  return { list, fetched, fetchPage };
}

const signer = makeCursorSigner('a unit test key of at least thirty-two characters');
const options = (fetchPage: (token: string | null) => Promise<ForwardPage<string>>) => ({ defaultSize: 5, maxSize: 20, filters: {}, fetchPage, signer, idOf: (item: string) => item });
const page = (fetchPage: (token: string | null) => Promise<ForwardPage<string>>, first: number, after: string | null = null): Promise<Connection<string>> =>
  forwardConnection('letters', { first, after }, options(fetchPage));
const nodes = (connection: Connection<string>) => connection.edges.map((edge) => edge.node);
const remove = (list: { items: string[] }, ...gone: string[]) => (list.items = list.items.filter((item) => !gone.includes(item)));

const letters = 'abcdefghijkl'.split('');

describe('a forward-only connection resumed inside an upstream page', () => {
  it('continues right after the last item shown when an item shown before it is removed', async () => {
    const upstream = changingUpstream(letters);
    const first = await page(upstream.fetchPage, 3);
    expect(nodes(first)).toEqual(['a', 'b', 'c']);
    remove(upstream.list, 'b');
    expect(nodes(await page(upstream.fetchPage, 3, first.pageInfo.endCursor))).toEqual(['d', 'e', 'f']);
  });

  it('does not repeat an item when one is inserted before the last item shown', async () => {
    const upstream = changingUpstream(letters);
    const first = await page(upstream.fetchPage, 3);
    upstream.list.items.unshift('new');
    expect(nodes(await page(upstream.fetchPage, 3, first.pageInfo.endCursor))).toEqual(['d', 'e', 'f']);
  });

  it('continues at the item that followed when the last item shown is removed', async () => {
    const upstream = changingUpstream(letters);
    const first = await page(upstream.fetchPage, 3);
    remove(upstream.list, 'c', 'a');
    expect(nodes(await page(upstream.fetchPage, 2, first.pageInfo.endCursor))).toEqual(['d', 'e']);
  });

  it('goes back to the start of the page, repeating rather than skipping, when neither is left', async () => {
    const upstream = changingUpstream(letters);
    const first = await page(upstream.fetchPage, 3);
    remove(upstream.list, 'a', 'c', 'd');
    // b was shown and comes again; e, the first item nobody has seen, is not lost.
    expect(nodes(await page(upstream.fetchPage, 3, first.pageInfo.endCursor))).toEqual(['b', 'e', 'f']);
  });

  it('finds its place by a digest when the ids are long, and keeps the cursor small', async () => {
    const long = letters.map((letter) => `${letter}-${'x'.repeat(300)}`);
    const upstream = changingUpstream(long);
    const first = await page(upstream.fetchPage, 3);
    remove(upstream.list, long[1]!);
    expect(nodes(await page(upstream.fetchPage, 3, first.pageInfo.endCursor))).toEqual(long.slice(3, 6));
    expect(first.pageInfo.endCursor!.length).toBeLessThan(200);
    // An id that looks like a digest is still told apart from one.
    const tricky = ['#a', '#b', '#c', '#d', '#e', '#f'];
    const other = changingUpstream(tricky);
    const start = await page(other.fetchPage, 2);
    remove(other.list, '#b');
    expect(nodes(await page(other.fetchPage, 2, start.pageInfo.endCursor))).toEqual(['#c', '#d']);
  });

  it('resumes a cursor issued before identities were kept by its position', async () => {
    const upstream = changingUpstream(letters);
    const old = signer.sign('letters', { t: null, s: 3, f: {} });
    expect(nodes(await page(upstream.fetchPage, 3, old))).toEqual(['d', 'e', 'f']);
  });

  it('points the last edge of an upstream page straight at the next page, one call per page when aligned', async () => {
    const upstream = changingUpstream(letters);
    let after: string | null = null;
    const seen: string[] = [];
    do {
      const connection: Connection<string> = await page(upstream.fetchPage, 5, after);
      seen.push(...nodes(connection));
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
    } while (after);
    expect(seen).toEqual(letters);
    expect(upstream.fetched).toEqual([null, 'f', 'k']);
  });

  it('refuses a cursor whose identity is not one this graph writes', async () => {
    const upstream = changingUpstream(letters);
    const forged = signer.sign('letters', { t: null, s: 3, l: 7, f: {} });
    await expect(page(upstream.fetchPage, 3, forged)).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT', argument: 'after' } });
  });
});
