import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/config.ts';
import { makeCursorSigner } from '../../../subgraphs/kit/cursors.ts';
import { readMarketplaceConfig } from '../../../subgraphs/marketplace/config.ts';
import { capturedLogs } from '../../support/logs.ts';
import { startTestStack } from '../../support/stack.ts';
import { SELLER_HEADERS } from '../../support/marketplaceSeller.ts';

/**
 * Issue 14, item 10: a products cursor carries the upstream's `next` URL, which goes back upstream
 * as it is. The cursor is signed with the deployment's key, so its query string cannot be forged
 * (`filters[status]=disabled&per_page=1000000`): a changed cursor is BAD_USER_INPUT before any call.
 */
const SECRET = 'a-shared-cursor-secret-for-every-replica-0123';
const t = await startTestStack({ CURSOR_SECRET: SECRET });
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;
const page = `query ($status: String, $after: String) {
  products(status: $status, first: 10, after: $after) { edges { node { sku status } } pageInfo { hasNextPage endCursor } } }`;
type Page = { products: { edges: { node: { sku: string; status: string } }[]; pageInfo: { endCursor: string } } };

beforeEach(async () => {
  await emulator.reset();
});

const body = (cursor: string) => cursor.split('.')[0]!;
const mac = (cursor: string) => cursor.split('.')[1]!;
const payloadOf = (cursor: string) => JSON.parse(Buffer.from(body(cursor), 'base64url').toString('utf8')) as { t: string; s: number; f: Record<string, unknown> };
const withPayload = (payload: unknown, signature: string) => `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;

describe('a products cursor', () => {
  it('refuses a forged query string, with the old signature or none, before any call', async () => {
    const first = await t.gql<Page>(page, { headers: seller, variables: { status: 'enabled' } });
    const cursor = first.data!.products.pageInfo.endCursor;
    const payload = payloadOf(cursor);
    expect(payload.t).toMatch(/^\/products\?filters%5Bstatus%5D=enabled&page=2&expires=\d+$/);
    await emulator.clearRequests();

    const forgedToken = payload.t.replace('enabled', 'disabled').concat('&per_page=1000000');
    const forgeries = [
      withPayload({ ...payload, t: forgedToken }, mac(cursor)),
      withPayload({ ...payload, t: forgedToken }, ''),
      body(withPayload({ ...payload, t: forgedToken }, '')),
      `${body(cursor)}.${mac(cursor).replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`,
    ];
    for (const after of forgeries) {
      const result = await t.gql(page, { headers: seller, variables: { status: 'enabled', after } });
      expect(result.errors, after).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT', argument: 'after' } }]);
    }
    expect(await emulator.requests()).toEqual([]);

    const next = await t.gql<Page>(page, { headers: seller, variables: { status: 'enabled', after: cursor } });
    expect(next.errors).toBeUndefined();
    const seen = new Set(first.data!.products.edges.map((edge) => edge.node.sku));
    expect(next.data!.products.edges.length).toBeGreaterThan(0);
    expect(next.data!.products.edges.every((edge) => edge.node.status === 'enabled' && !seen.has(edge.node.sku))).toBe(true);
  });

  it('refuses an upstream URL whose filter differs from the one asked for, even signed by this deployment', async () => {
    const signer = makeCursorSigner(SECRET);
    const after = signer.sign('marketplace-products', { t: '/products?filters%5Bstatus%5D=disabled&page=2&expires=9999999999999', s: 0, f: { status: 'enabled' } });
    const result = await t.gql(page, { headers: seller, variables: { status: 'enabled', after } });
    expect(result.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT', argument: 'after' } }]);
    expect(await emulator.requests()).toEqual([]);
  });

  it('is accepted by every replica sharing CURSOR_SECRET, and by no other', () => {
    const issued = makeCursorSigner(SECRET).sign('marketplace-products', { t: '/products?page=2', s: 0, f: { status: null } });
    expect(makeCursorSigner(SECRET).open(issued, 'marketplace-products')).toMatchObject({ t: '/products?page=2' });
    let warned = 0;
    const other = makeCursorSigner(`${SECRET}-other`, { onForeignKey: () => (warned += 1) });
    expect(() => other.open(issued, 'marketplace-products')).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: 'CURSOR_EXPIRED', argument: 'after' }) }));
    expect(() => other.open(issued, 'marketplace-products')).toThrow(/signed under another CURSOR_SECRET/);
    expect(warned).toBe(2);
  });

  it('signed by a replica with another CURSOR_SECRET is CURSOR_EXPIRED through the graph, and the log says replicas disagree', async () => {
    const after = makeCursorSigner('another-replica-s-cursor-secret-0123456789').sign('marketplace-products', { t: '/products?page=2', s: 0, f: { status: null } });
    await emulator.clearRequests();
    const result = await t.gql(page, { headers: seller, variables: { after } });
    expect(result.errors).toMatchObject([{ extensions: { code: 'CURSOR_EXPIRED', argument: 'after' }, message: expect.stringContaining('CURSOR_SECRET') }]);
    expect(await emulator.requests()).toEqual([]);
    expect(capturedLogs.join('')).toContain('every replica must share one CURSOR_SECRET');
  });

  it('reads CURSOR_SECRET once, refusing a short one, and draws a random key when unset', () => {
    expect(() => readMarketplaceConfig({ CURSOR_SECRET: 'short' })).toThrow(ConfigError);
    expect(readMarketplaceConfig({ CURSOR_SECRET: SECRET }).cursorSecret).toBe(SECRET);
    expect(readMarketplaceConfig({}).cursorSecret).not.toBe(readMarketplaceConfig({}).cursorSecret);
  });
});
