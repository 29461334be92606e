import { describe, expect, it } from 'vitest';
import { forwardConnection, type Connection, type ForwardPage } from '../../subgraphs/kit/connections.ts';
import { holdsCredential, makeCursorSigner } from '../../subgraphs/kit/cursors.ts';
import { errorForUpstream } from '../../subgraphs/kit/errors.ts';

/** Seven items in upstream pages of three, tokens `p2`, `p3`. */
const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
function upstream() {
  const fetched: (string | null)[] = [];
  const fetchPage = async (token: string | null): Promise<ForwardPage<string>> => {
    fetched.push(token);
    const page = token === null ? 0 : Number(token.slice(1)) - 1;
    const next = (page + 1) * 3 < items.length ? `p${page + 2}` : null;
    return { items: items.slice(page * 3, page * 3 + 3), next };
  };
  return { fetched, fetchPage };
}
const signer = makeCursorSigner('a test key of at least thirty-two characters');
const options = (fetchPage: (token: string | null) => Promise<ForwardPage<string>>, filters: Record<string, string | null> = { status: null }) => ({ defaultSize: 3, maxSize: 10, filters, fetchPage, signer, idOf: (item: string) => item });

describe('forward-only connections', () => {
  it('give the same list for any page size, reading each upstream page once when aligned', async () => {
    for (const first of [1, 2, 3, 4, 7, 10]) {
      const { fetchPage } = upstream();
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const connection: Connection<string> = await forwardConnection('things', { first, after }, options(fetchPage));
        seen.push(...connection.edges.map((edge) => edge.node));
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor;
      }
      expect(seen, `first ${first}`).toEqual(items);
    }
    const aligned = upstream();
    let after: string | null = null;
    do {
      const connection: Connection<string> = await forwardConnection('things', { first: 3, after }, options(aligned.fetchPage));
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
    } while (after);
    expect(aligned.fetched).toEqual([null, 'p2', 'p3']);
  });

  it('refuse a cursor under another filter, naming the argument', async () => {
    const { fetchPage } = upstream();
    const connection = await forwardConnection('things', { first: 2 }, options(fetchPage, { status: 'open' }));
    await expect(forwardConnection('things', { after: connection.pageInfo.endCursor }, options(fetchPage, { status: 'closed' }))).rejects.toMatchObject({
      extensions: { code: 'BAD_USER_INPUT', argument: 'status' },
    });
    await expect(forwardConnection('things', { first: 11 }, options(fetchPage))).rejects.toMatchObject({ extensions: { argument: 'first' } });
  });
});

describe('upstream page tokens', () => {
  it('are seen to hold a credential plain, percent-encoded or in base64', () => {
    const secret = 'key-1234567890';
    expect(holdsCredential(`/products?page=2&api_key=${secret}`, [secret])).toBe(true);
    expect(holdsCredential(encodeURIComponent(`{"k":"${secret}"}`), [secret])).toBe(true);
    expect(holdsCredential(Buffer.from(JSON.stringify({ k: secret })).toString('base64url'), [secret])).toBe(true);
    expect(holdsCredential('/products?page=2&expires=1700000000000', [secret, undefined])).toBe(false);
  });

  it('that the upstream refuses are CURSOR_EXPIRED, not the caller’s bad input', () => {
    expect(errorForUpstream({ service: 'svc', status: 410, body: { errors: ['expired'] }, cursor: true })?.extensions).toMatchObject({ code: 'CURSOR_EXPIRED', status: 410 });
    expect(errorForUpstream({ service: 'svc', status: 400, body: undefined, cursor: true })?.extensions.code).toBe('CURSOR_EXPIRED');
    expect(errorForUpstream({ service: 'svc', status: 401, body: undefined, cursor: true })?.extensions.code).toBe('UNAUTHENTICATED');
    expect(errorForUpstream({ service: 'svc', status: 400, body: undefined })?.extensions.code).toBe('BAD_USER_INPUT');
  });
});
