import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { LOGIN_PROMPT } from '../../emulators/marketplace/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { encodeCursor } from '../../subgraphs/kit/cursors.ts';
import { knownSecrets } from '../support/logs.ts';
import { DIALECTS, startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

// A marketplace name other than the spec's `mkt` proves the path segment is configuration.
const t = await startTestStack({ MARKETPLACE_NAME: 'demomarket' });
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;
const withUserToken = { 'x-marketplace-user-token': DEMO_CREDENTIALS.userToken, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };
const SHIPMENTS = '/shipments/demomarket/';

beforeEach(async () => {
  await emulator.reset();
});

type Errors = { errors?: { message: string; extensions?: Record<string, unknown> }[] };
const codes = (result: Errors) => result.errors?.map((error) => error.extensions?.code);
const apiCalls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}`);
const decoded = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');

describe.each(DIALECTS)('%s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.dialect(dialect);
  });

  describe('label groups (PLP)', () => {
    it('lists every PLP with its orders and label data, one list call and one view per PLP', async () => {
      const result = await t.gql<{ labelGroups: { id: string; expirationDate: string; orders: { code: string; value: number }[]; labels: { plp: { labels: unknown[] } } }[] }>(
        '{ labelGroups { id expirationDate orders { code customer value } labels } }',
        { headers: seller },
      );
      expect(result.errors).toBeUndefined();
      const groups = result.data!.labelGroups;
      expect(groups.map((group) => group.id)).toEqual(['7001', '7002']);
      expect(groups[0]!.orders.map((order) => order.code)).toEqual(['ORD-2001', 'ORD-2002', 'ORD-2003']);
      expect(typeof groups[0]!.orders[0]!.value).toBe('number');
      expect(groups[0]!.expirationDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(groups[0]!.labels.plp.labels).toHaveLength(3);
      const log = await emulator.requests();
      expect(log.map((request) => `${request.method} ${request.path}`)).toEqual([`GET ${SHIPMENTS}`, `GET ${SHIPMENTS}view`, `GET ${SHIPMENTS}view`]);
      expect(log.slice(1).map((request) => request.query.plp_id)).toEqual(['7001', '7002']);
    });

    it('groups orders, reading the new id from the message and the rest from the list only when selected', async () => {
      const bare = await t.gql('mutation { groupOrders(orderCodes: ["ORD-2010", "ORD-2011"]) { id } }', { headers: seller });
      expect(bare).toEqual({ data: { groupOrders: { id: '7003' } } });
      expect(await apiCalls()).toEqual([`POST ${SHIPMENTS}`]);

      await emulator.clearRequests();
      const full = await t.gql('mutation { groupOrders(orderCodes: ["ORD-2012"]) { id expirationDate orders { code } } }', { headers: seller });
      expect(full.data).toEqual({ groupOrders: { id: '7004', expirationDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), orders: [{ code: 'ORD-2012' }] } });
      expect(await apiCalls()).toEqual([`POST ${SHIPMENTS}`, `GET ${SHIPMENTS}`]);
    });

    it('accepts the 201 the real service answers to a grouping', async () => {
      await emulator.control('shipments', { groupStatus: 201 });
      const result = await t.gql('mutation { groupOrders(orderCodes: ["ORD-2013"]) { id orders { code } } }', { headers: seller });
      expect(result).toEqual({ data: { groupOrders: { id: '7003', orders: [{ code: 'ORD-2013' }] } } });
      expect((await emulator.requests())[0]!.status).toBe(201);
    });

    it('refuses an empty order list before calling, and passes on the service’s refusal', async () => {
      const empty = await t.gql('mutation { groupOrders(orderCodes: []) { id } }', { headers: seller });
      expect(empty.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'orderCodes' });
      expect(await apiCalls()).toEqual([]);

      const grouped = await t.gql('mutation { groupOrders(orderCodes: ["ORD-2001"]) { id } }', { headers: seller });
      expect(grouped.errors?.[0]).toMatchObject({ message: 'marketplace: Order ORD-2001 is already grouped in PLP 7001', extensions: { code: 'BAD_USER_INPUT', status: 422 } });
    });

    it.each([
      ['names no PLP', { message: 'ok' }],
      ['names a PLP id no path segment may hold', { plp_id: '7'.repeat(100_000) }],
    ])('reports a grouping answer that %s as UPSTREAM_ERROR, the write applied', async (_name, body) => {
      await emulator.fault({ path: SHIPMENTS, method: 'POST', status: 200, body });
      const result = await t.gql('mutation { groupOrders(orderCodes: ["ORD-2010"]) { id } }', { headers: seller });
      expect(JSON.stringify(result).length).toBeLessThan(1_000);
      expect(result.errors?.[0]).toMatchObject({
        message: expect.stringContaining('names no PLP id. Do not send the mutation again'),
        extensions: { code: 'UPSTREAM_ERROR', service: 'marketplace', status: 200, writeOutcome: 'APPLIED' },
      });
    });

    it('ungroups with a JSON body on DELETE; the PLP is then gone, and a second ungroup is NOT_FOUND', async () => {
      const result = await t.gql('mutation { ungroupLabelGroup(id: "7001") { id message } }', { headers: seller });
      expect(result.data).toEqual({ ungroupLabelGroup: { id: '7001', message: 'Plp 7001 desagrupada com sucesso.' } });
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'DELETE', path: SHIPMENTS, status: 200 });
      expect(call!.headers).toContain('content-type');

      expect(await t.gql('{ labelGroup(id: "7001") { id } }', { headers: seller })).toEqual({ data: { labelGroup: null } });
      const again = await t.gql('mutation { ungroupLabelGroup(id: "7001") { id } }', { headers: seller });
      expect(again.errors?.[0]).toMatchObject({ message: 'marketplace: PLP 7001 not found', extensions: { code: 'NOT_FOUND', status: 404 } });
    });
  });

  describe('questions', () => {
    const page = `query ($platform: String!, $status: QuestionStatus, $first: Int, $after: String) {
      questions(platform: $platform, status: $status, first: $first, after: $after) {
        edges { cursor node { id answered sku } } pageInfo { hasNextPage endCursor } } }`;
    type Page = { questions: { edges: { cursor: string; node: { id: string; answered: boolean; sku: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };

    async function pageThrough(variables: Record<string, unknown>): Promise<string[]> {
      const ids: string[] = [];
      let after: string | null = null;
      for (;;) {
        const result: { data?: Page | null; errors?: unknown } = await t.gql<Page>(page, { headers: seller, variables: { ...variables, after } });
        expect(result.errors).toBeUndefined();
        ids.push(...result.data!.questions.edges.map((edge) => edge.node.id));
        if (!result.data!.questions.pageInfo.hasNextPage) return ids;
        after = result.data!.questions.pageInfo.endCursor;
      }
    }

    it('pages forward over the upstream cursor, one call per upstream page, with no credential in any cursor', async () => {
      const ids = await pageThrough({ platform: 'ALPHA', first: 20 });
      expect(ids).toHaveLength(60);
      expect(new Set(ids).size).toBe(60);
      expect(ids.every((id) => id.startsWith('ALPHA-'))).toBe(true);
      const log = await emulator.requests();
      expect(log.map((request) => request.path)).toEqual(['/questions', '/questions', '/questions']);
      expect(log[0]!.query).toEqual({ platform: 'ALPHA' });
      expect(log[1]!.query.cursor).toBeTruthy();
      expect(log[2]!.query.cursor).not.toBe(log[1]!.query.cursor);

      const first = await t.gql<Page>(page, { headers: seller, variables: { platform: 'ALPHA', first: 20 } });
      const cursors = first.data!.questions.edges.map((edge) => decoded(edge.cursor)).join('');
      for (const secret of Object.values(DEMO_CREDENTIALS)) expect(cursors).not.toContain(secret);
    });

    it('gives the same list whatever page size the client picks', async () => {
      const byTwenty = await pageThrough({ platform: 'ALPHA', first: 20 });
      const bySeven = await pageThrough({ platform: 'ALPHA', first: 7 });
      expect(bySeven).toEqual(byTwenty);
    });

    it('filters by status, and refuses a cursor reused under another filter before calling', async () => {
      const unanswered = await t.gql<Page>(page, { headers: seller, variables: { platform: 'ALPHA', status: 'UNANSWERED', first: 5 } });
      expect(unanswered.data!.questions.edges.every((edge) => edge.node.answered === false)).toBe(true);
      expect((await emulator.requests())[0]!.query).toEqual({ platform: 'ALPHA', status: 'UNANSWERED' });

      await emulator.clearRequests();
      const after = unanswered.data!.questions.pageInfo.endCursor;
      const otherStatus = await t.gql(page, { headers: seller, variables: { platform: 'ALPHA', status: 'ANSWERED', after } });
      expect(otherStatus.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', argument: 'status' } });
      expect(otherStatus.errors?.[0]?.message).toContain('start again without `after`');
      const noStatus = await t.gql(page, { headers: seller, variables: { platform: 'ALPHA', after } });
      expect(noStatus.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'status' });
      const otherPlatform = await t.gql(page, { headers: seller, variables: { platform: 'BETA', status: 'UNANSWERED', after } });
      expect(otherPlatform.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'platform' });
      const garbage = await t.gql(page, { headers: seller, variables: { platform: 'ALPHA', after: 'not-a-cursor' } });
      expect(garbage.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
      expect(await apiCalls()).toEqual([]);
    });

    it('fetches each product once when 50 questions name 10 products', async () => {
      const result = await t.gql<{ questions: { edges: { node: { sku: string; product: { sku: string; name: string } } }[] } }>(
        '{ questions(platform: "ALPHA", first: 50) { edges { node { id sku product { sku name } } } } }',
        { headers: seller },
      );
      expect(result.errors).toBeUndefined();
      const edges = result.data!.questions.edges;
      expect(edges).toHaveLength(50);
      for (const edge of edges) expect(edge.node.product.sku).toBe(edge.node.sku);
      const calls = await apiCalls();
      expect(calls.filter((call) => call === 'GET /questions')).toHaveLength(3);
      const productCalls = calls.filter((call) => call.startsWith('GET /products/'));
      expect(productCalls).toHaveLength(10);
      expect(new Set(productCalls).size).toBe(10);
    });

    it('refuses a list of platforms before calling, and maps the service’s 400 {errors}', async () => {
      const list = await t.gql('{ questions(platform: "ALPHA,BETA") { edges { cursor } } }', { headers: seller });
      expect(list.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'platform' });
      expect(await apiCalls()).toEqual([]);
      const unknown = await t.gql('{ questions(platform: "ZZZ") { edges { cursor } } }', { headers: seller });
      expect(unknown).toMatchObject({ data: { questions: null }, errors: [{ message: 'marketplace: Unknown platform: ZZZ', extensions: { code: 'BAD_USER_INPUT', status: 400 } }] });
    });

    it('maps a refused upstream cursor to CURSOR_EXPIRED', async () => {
      const first = await t.gql<Page>(page, { headers: seller, variables: { platform: 'ALPHA', first: 20 } });
      await emulator.fault({ path: '/questions', status: 400, body: { errors: ['Invalid cursor'] } });
      const next = await t.gql(page, { headers: seller, variables: { platform: 'ALPHA', after: first.data!.questions.pageInfo.endCursor } });
      expect(codes(next)).toEqual(['CURSOR_EXPIRED']);
    });

    it('reads one question with its product, and null without an error for the documented 404', async () => {
      const found = await t.gql('{ question(id: "ALPHA-100037") { id answered message name sku tags createdOn customer { name } answer { message createdOn } product { sku } } }', { headers: seller });
      expect(found.errors).toBeUndefined();
      expect(found.data?.question).toMatchObject({ id: 'ALPHA-100037', answered: false, sku: 'SKU-0002', answer: null, product: { sku: 'SKU-0002' }, createdOn: expect.stringMatching(/Z$/) });
      expect(await t.gql('{ question(id: "ALPHA-1") { id } }', { headers: seller })).toEqual({ data: { question: null } });
      expect((await emulator.requests()).at(-1)!.status).toBe(404);
    });

    it('deletes a question (204), and a second delete is NOT_FOUND with the service’s message', async () => {
      expect(await t.gql('mutation { deleteQuestion(id: "ALPHA-100037") { id } }', { headers: seller })).toEqual({ data: { deleteQuestion: { id: 'ALPHA-100037' } } });
      const again = await t.gql('mutation { deleteQuestion(id: "ALPHA-100037") { id } }', { headers: seller });
      expect(again.errors?.[0]).toMatchObject({ message: 'marketplace: Question not found', extensions: { code: 'NOT_FOUND', status: 404 } });
    });

    it('answers with a multipart form, and refuses a blank answer before calling', async () => {
      const answered = await t.gql('mutation { answerQuestion(id: "ALPHA-100037", answer: "Yes, ships in 2 days.") { id answered answer { message createdOn } } }', { headers: withUserToken });
      expect(answered.errors).toBeUndefined();
      expect(answered.data?.answerQuestion).toMatchObject({ id: 'ALPHA-100037', answered: true, answer: { message: 'Yes, ships in 2 days.' } });
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'POST', path: '/questions/ALPHA-100037/answer', status: 200 });
      expect(call!.headers).toEqual(expect.arrayContaining(['x-user-token', 'x-accountmanager-key', 'content-type']));
      expect(call!.headers).not.toContain('x-api-key');

      const twice = await t.gql('mutation { answerQuestion(id: "ALPHA-100037", answer: "again") { id } }', { headers: seller });
      expect(twice.errors?.[0]).toMatchObject({ message: 'marketplace: Question has already been answered', extensions: { code: 'CONFLICT' } });

      await emulator.clearRequests();
      const blank = await t.gql('mutation { answerQuestion(id: "ALPHA-100111", answer: "  ") { id } }', { headers: seller });
      expect(blank.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'answer' });
      expect(await apiCalls()).toEqual([]);
    });

    it('turns a 500 with an empty body into UPSTREAM_ERROR and 429 into RATE_LIMITED', async () => {
      await emulator.fault({ path: '/questions*', status: 500 });
      const read = await t.gql('{ question(id: "ALPHA-100037") { id } questions(platform: "ALPHA") { edges { cursor } } }', { headers: seller });
      expect(read).toMatchObject({ data: { question: null, questions: null } });
      const deleted = await t.gql('mutation { deleteQuestion(id: "ALPHA-100037") { id } }', { headers: seller });
      const answered = await t.gql('mutation { answerQuestion(id: "ALPHA-100037", answer: "x") { id } }', { headers: seller });
      for (const error of [...read.errors!, ...deleted.errors!, ...answered.errors!]) {
        expect(error).toMatchObject({ message: 'marketplace: answered HTTP 500', extensions: { code: 'UPSTREAM_ERROR', status: 500 } });
      }
      // A 500 is not retried, even on reads.
      expect((await emulator.requests()).map((request) => request.status)).toEqual([500, 500, 500, 500]);
      await fetch(`${emulator.url}/__emulator/faults`, { method: 'DELETE' });

      await emulator.fault({ path: '/questions', status: 429, body: { error: 'Too many requests' } });
      const limited = await t.gql('{ questions(platform: "ALPHA") { edges { cursor } } }', { headers: seller });
      expect(limited.errors?.[0]).toMatchObject({ message: 'marketplace: Too many requests', extensions: { code: 'RATE_LIMITED', status: 429 } });
    });
  });

  describe('products', () => {
    const page = `query ($status: String, $first: Int, $after: String) {
      products(status: $status, first: $first, after: $after) { totalCount edges { node { sku status } } pageInfo { hasNextPage endCursor } } }`;
    type Page = { products: { totalCount: number; edges: { node: { sku: string; status: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };

    it('pages over the next URL, one call per page, keeping only its path in the cursor', async () => {
      const skus: string[] = [];
      let after: string | null = null;
      let pages = 0;
      for (;;) {
        const result: { data?: Page | null } = await t.gql<Page>(page, { headers: seller, variables: { first: 10, after } });
        expect(result.data!.products.totalCount).toBe(30);
        skus.push(...result.data!.products.edges.map((edge) => edge.node.sku));
        pages += 1;
        if (!result.data!.products.pageInfo.hasNextPage) break;
        after = result.data!.products.pageInfo.endCursor;
        const cursor = decoded(after!);
        expect(cursor).toContain('/products?');
        expect(cursor).not.toContain('http');
      }
      expect(pages).toBe(3);
      expect(skus).toEqual(Array.from({ length: 30 }, (_, index) => `SKU-${String(index + 1).padStart(4, '0')}`));
      const log = await emulator.requests();
      expect(log.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /products', 'GET /products', 'GET /products']);
      expect(log[1]!.query).toMatchObject({ page: '2', expires: expect.any(String) });
    });

    it('filters by status with filters[status] and refuses a changed filter on a cursor', async () => {
      const enabled = await t.gql<Page>(page, { headers: seller, variables: { status: 'enabled', first: 10 } });
      expect(enabled.data!.products.totalCount).toBe(26);
      expect(enabled.data!.products.edges.every((edge) => edge.node.status === 'enabled')).toBe(true);
      expect((await emulator.requests())[0]!.query).toEqual({ 'filters[status]': 'enabled' });
      const changed = await t.gql(page, { headers: seller, variables: { status: 'disabled', after: enabled.data!.products.pageInfo.endCursor } });
      expect(changed.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'status' });
    });

    it('answers CURSOR_EXPIRED once the next URL is older than 10 minutes, on the emulator’s clock', async () => {
      const first = await t.gql<Page>(page, { headers: seller, variables: { first: 10 } });
      const after = first.data!.products.pageInfo.endCursor;
      await emulator.control('clock', { advanceMs: 9 * 60_000 });
      const inTime = await t.gql<Page>(page, { headers: seller, variables: { first: 10, after } });
      expect(inTime.data!.products.edges[0]!.node.sku).toBe('SKU-0011');

      await emulator.control('clock', { advanceMs: 2 * 60_000 });
      const late = await t.gql(page, { headers: seller, variables: { first: 10, after } });
      expect(late).toMatchObject({ data: { products: null }, errors: [{ extensions: { code: 'CURSOR_EXPIRED', service: 'marketplace', status: 410 } }] });
      expect(late.errors?.[0]?.message).toContain('without `after`');
    });

    it('never follows a cursor to another host: a forged one is refused before any call', async () => {
      for (const t2 of ['http://evil.example/products?page=2', '/questions?platform=ALPHA']) {
        const forged = encodeCursor('marketplace-products', { t: t2, s: 0, f: { status: null } });
        const result = await t.gql(page, { headers: seller, variables: { after: forged } });
        expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
      }
      expect(await apiCalls()).toEqual([]);
    });

    it('reads a product with its variations, and null for an unknown SKU', async () => {
      const found = await t.gql('{ product(sku: "SKU-0002") { sku name price promotionalPrice categories { code name } images specifications { key value } variationAttributes variations { sku qty price } } }', { headers: seller });
      expect(found.errors).toBeUndefined();
      expect(found.data?.product).toMatchObject({ sku: 'SKU-0002', variationAttributes: ['color'], variations: [{ sku: 'SKU-0002-BLA' }, { sku: 'SKU-0002-WHI' }] });
      expect(await t.gql('{ product(sku: "NOPE") { sku } }', { headers: seller })).toEqual({ data: { product: null } });
    });

    it('creates a product on the {api_url} host, checking the SKU length first', async () => {
      const created = await t.gql(
        `mutation { createProduct(input: { sku: "NEW-1", name: "Lamp", price: 120, promotionalPrice: 99.9, qty: 4, categories: [{ code: "CAT1", name: "Lighting" }],
          specifications: [{ key: "material", value: "steel" }], variations: [{ sku: "NEW-1-BLA", qty: 2 }], variationAttributes: ["color"] }) {
          sku name price promotionalPrice qty variations { sku qty } } }`,
        { headers: withUserToken },
      );
      expect(created.errors).toBeUndefined();
      expect(created.data?.createProduct).toEqual({ sku: 'NEW-1', name: 'Lamp', price: 120, promotionalPrice: 99.9, qty: 4, variations: [{ sku: 'NEW-1-BLA', qty: 2 }] });
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'POST', path: '/products', status: 201 });
      expect(call!.headers).toContain('x-user-token');

      await emulator.clearRequests();
      const long = await t.gql(`mutation { createProduct(input: { sku: "${'X'.repeat(26)}", name: "Too long" }) { sku } }`, { headers: seller });
      expect(long.errors?.[0]).toMatchObject({ message: 'input.sku: must be at most 25 characters; got 26', extensions: { code: 'BAD_USER_INPUT', argument: 'input.sku' } });
      const longVariation = await t.gql(`mutation { createProduct(input: { sku: "OK", name: "x", variations: [{ sku: "${'Y'.repeat(26)}" }] }) { sku } }`, { headers: seller });
      expect(longVariation.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.variations.0.sku' });
      expect(await apiCalls()).toEqual([]);

      const duplicate = await t.gql('mutation { createProduct(input: { sku: "SKU-0001", name: "Again" }) { sku } }', { headers: seller });
      expect(duplicate.errors?.[0]).toMatchObject({ message: 'marketplace: sku has already been taken', extensions: { code: 'CONFLICT', status: 409 } });
    });
  });

  describe('variations', () => {
    it('reads a variation with its price and product, and null for an unknown SKU', async () => {
      const found = await t.gql('{ variation(sku: "SKU-0002-WHI") { sku qty ean images price specifications { key value } product { sku name } } }', { headers: seller });
      expect(found.errors).toBeUndefined();
      expect(found.data?.variation).toMatchObject({ sku: 'SKU-0002-WHI', price: expect.any(Number), product: { sku: 'SKU-0002', name: 'Desk lamp 2' } });
      expect(await t.gql('{ variation(sku: "NOPE") { sku } }', { headers: seller })).toEqual({ data: { variation: null } });
    });

    it('updates quantity, EAN, images and specifications', async () => {
      const result = await t.gql(
        'mutation { updateVariation(sku: "SKU-0001-BLA", input: { qty: 7, ean: "7890000000001", images: ["https://img.example/1.jpg"], specifications: [{ key: "color", value: "matte black" }] }) { sku qty ean images specifications { key value } } }',
        { headers: seller },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.updateVariation).toMatchObject({ sku: 'SKU-0001-BLA', qty: 7, ean: '7890000000001', images: ['https://img.example/1.jpg'] });
      expect((result.data?.updateVariation as { specifications: unknown[] }).specifications).toContainEqual({ key: 'color', value: 'matte black' });
      expect(await apiCalls()).toEqual(['PUT /variations/SKU-0001-BLA']);
    });

    it('refuses an empty update, a negative quantity and a non-URL image before calling', async () => {
      for (const [input, argument] of [['{}', 'input'], ['{ qty: -1 }', 'input.qty'], ['{ images: ["ftp://x"] }', 'input.images'], ['{ specifications: [{ key: "price", value: "cheap" }] }', 'input.specifications.value']] as const) {
        const result = await t.gql(`mutation { updateVariation(sku: "SKU-0001-BLA", input: ${input}) { sku } }`, { headers: seller });
        expect(result.errors?.[0]?.extensions, input).toMatchObject({ code: 'BAD_USER_INPUT', argument });
      }
      expect(await apiCalls()).toEqual([]);
    });

    it('sets the price as decimal text', async () => {
      const result = await t.gql('mutation { updateVariationPrice(sku: "SKU-0001-BLA", price: 49.9) { sku price specifications { key value } } }', { headers: seller });
      expect(result.errors).toBeUndefined();
      expect(result.data?.updateVariationPrice).toMatchObject({ price: 49.9 });
      expect((result.data?.updateVariationPrice as { specifications: unknown[] }).specifications).toContainEqual({ key: 'price', value: '49.90' });

      await emulator.clearRequests();
      const tooPrecise = await t.gql('mutation { updateVariationPrice(sku: "SKU-0001-BLA", price: 1.999) { sku } }', { headers: seller });
      expect(tooPrecise.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'price' });
      expect(await apiCalls()).toEqual([]);
    });

    it('deletes only a disconnected variation; the service’s refusal is a clear CONFLICT', async () => {
      const connected = await t.gql('mutation { deleteVariation(sku: "SKU-0001-BLA") { sku } }', { headers: seller });
      expect(connected).toMatchObject({
        data: { deleteVariation: null },
        errors: [{ message: 'marketplace: Variations can only be deleted while the item is disconnected from the marketplace', extensions: { code: 'CONFLICT', status: 409 } }],
      });
      await emulator.control('variations', { sku: 'SKU-0001-BLA', connected: false });
      expect(await t.gql('mutation { deleteVariation(sku: "SKU-0001-BLA") { sku } }', { headers: seller })).toEqual({ data: { deleteVariation: { sku: 'SKU-0001-BLA' } } });
      expect(await t.gql('{ variation(sku: "SKU-0001-BLA") { sku } }', { headers: seller })).toEqual({ data: { variation: null } });
      const missing = await t.gql('mutation { deleteVariation(sku: "SKU-0001-BLA") { sku } }', { headers: seller });
      expect(codes(missing)).toEqual(['NOT_FOUND']);
    });
  });

  describe('fulfillment', () => {
    const xml = (size = 0) => `<?xml version="1.0"?><nfeProc><NFe>${'<det/>'.repeat(size)}</NFe></nfeProc>`;
    const send = (document: string, text: string, headers: Record<string, string> = seller) =>
      t.gql('mutation ($input: FulfillmentInvoiceInput!) { sendFulfillmentInvoice(input: $input) { recipientDocument accepted } }', { headers, variables: { input: { recipientDocument: document, xml: text } } });

    it('sends a small invoice as JSON text and a large one as a multipart file, intact', async () => {
      expect((await send('12345678000190', xml())).data).toEqual({ sendFulfillmentInvoice: { recipientDocument: '12345678000190', accepted: true } });
      const large = xml(50_000);
      expect((await send('98765432000110', large)).errors).toBeUndefined();
      const received = (await (await fetch(`${emulator.url}/__emulator/invoices`)).json()) as { via: string; payload: string; recipient_document: string }[];
      expect(received.map((invoice) => [invoice.recipient_document, invoice.via])).toEqual([
        ['12345678000190', 'json'],
        ['98765432000110', 'multipart'],
      ]);
      expect(received[1]!.payload).toBe(large);
      expect((await emulator.requests()).map((request) => request.status)).toEqual([204, 204]);
    });

    it('sends the account key only when given, as the spec allows on this endpoint', async () => {
      const { 'x-marketplace-account-key': _omitted, ...noAccount } = seller;
      expect((await send('12345678000190', xml(), noAccount)).errors).toBeUndefined();
      expect((await emulator.requests())[0]!.headers).not.toContain('x-accountmanager-key');
    });

    it('refuses text that is not XML before calling, and passes on the service’s refusal of a centre', async () => {
      const notXml = await send('12345678000190', 'just text');
      expect(notXml.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.xml' });
      expect(await apiCalls()).toEqual([]);
      const unknownCentre = await send('00000000000000', xml());
      expect(unknownCentre.errors?.[0]).toMatchObject({ message: expect.stringContaining('not a distribution centre'), extensions: { code: 'BAD_USER_INPUT', status: 422 } });
    });

    it('lists stock as a connection over page/per_page, quantities as numbers, without the account key', async () => {
      const query = 'query ($first: Int, $after: String) { fulfillmentStock(recipientDocument: "12345678000190", first: $first, after: $after) { edges { node { sku recipientDocument depositType stock reservedStock } } pageInfo { hasNextPage endCursor } } }';
      type Stock = { fulfillmentStock: { edges: { node: { sku: string; stock: number; recipientDocument: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } };
      const first = await t.gql<Stock>(query, { headers: seller, variables: { first: 10 } });
      expect(first.errors).toBeUndefined();
      expect(first.data!.fulfillmentStock.edges).toHaveLength(10);
      expect(first.data!.fulfillmentStock.edges.every((edge) => typeof edge.node.stock === 'number' && edge.node.recipientDocument === '12345678000190')).toBe(true);
      const second = await t.gql<Stock>(query, { headers: seller, variables: { first: 10, after: first.data!.fulfillmentStock.pageInfo.endCursor } });
      expect(second.data!.fulfillmentStock.edges[0]!.node.sku).not.toBe(first.data!.fulfillmentStock.edges[0]!.node.sku);
      const log = await emulator.requests();
      expect(log.map((request) => request.query)).toEqual([
        { recipient_document: '12345678000190', page: '1', per_page: '10' },
        { recipient_document: '12345678000190', page: '2', per_page: '10' },
      ]);
      expect(log[0]!.headers).not.toContain('x-accountmanager-key');

      await emulator.clearRequests();
      const tooMany = await t.gql(query, { headers: seller, variables: { first: 101 } });
      expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'first' });
      expect(await apiCalls()).toEqual([]);
    });

    it('reads symbolic-return invoices, needing a delivery or an order access key', async () => {
      const found = await t.gql('{ symbolicReturnInvoices(delivery: "DLV-901") { accessKey number series issuedAt cdVatNumber delivery orderAccessKey xml } }', { headers: seller });
      expect(found.errors).toBeUndefined();
      expect(found.data?.symbolicReturnInvoices).toEqual([expect.objectContaining({ number: '5002', delivery: 'DLV-901', cdVatNumber: '98765432000110', xml: expect.stringContaining('<nfeProc>') })]);
      expect((await emulator.requests())[0]).toMatchObject({ path: '/fulfillment/demomarket/delivery/nfe', query: { delivery: 'DLV-901' } });

      await emulator.clearRequests();
      const neither = await t.gql('{ symbolicReturnInvoices(cdVatNumber: "12345678000190") { number } }', { headers: seller });
      expect(neither.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'delivery' });
      expect(await apiCalls()).toEqual([]);
    });
  });

  describe('freights and status types', () => {
    it('lists the latest freight quotations with amounts as numbers, without needing the e-mail', async () => {
      const { 'x-marketplace-email': _omitted, ...noEmail } = seller;
      const result = await t.gql<{ freights: { createdAt: string; saleSystem: string; request: { zipcode: string; products: { sku: string; qty: number }[] }; response: { products: { categoryNames: string[]; freights: { amount: number; deliveryTime: number; courierName: string }[] }[] } }[] }>(
        '{ freights { account { id name } createdAt saleSystem request { path zipcode products { sku qty } } response { render products { sku categoryNames freights { shippingMethod courierName quantity amount deliveryTime } } } } }',
        { headers: noEmail },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!.freights).toHaveLength(12);
      const option = result.data!.freights[0]!.response.products[0]!.freights[0]!;
      expect(option).toMatchObject({ amount: 19.9, deliveryTime: 8, courierName: 'Correios PAC' });
      expect(typeof result.data!.freights[0]!.request.products[0]!.qty).toBe('number');
      expect(result.data!.freights[0]!.createdAt).toMatch(/Z$/);
      expect((await emulator.requests())[0]!.headers).not.toContain('x-user-email');
    });

    it('lists the order status types', async () => {
      const result = await t.gql('{ statusTypes { code name } }', { headers: seller });
      expect(result.data?.statusTypes).toContainEqual({ code: 'shipped', name: 'Shipped' });
    });
  });

  describe('authentication', () => {
    it('answers missing credentials with UNAUTHENTICATED naming the headers, and calls nothing', async () => {
      const none = await t.gql('{ labelGroups { id } statusTypes { code } }');
      expect(codes(none)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
      expect(none.errors?.[0]?.message).toContain('x-marketplace-email and x-marketplace-api-key (or x-marketplace-user-token)');
      const { 'x-marketplace-account-key': _omitted, ...noAccount } = seller;
      const withoutAccount = await t.gql('{ statusTypes { code } }', { headers: noAccount });
      expect(withoutAccount.errors?.[0]).toMatchObject({ message: expect.stringContaining('x-marketplace-account-key'), extensions: { code: 'UNAUTHENTICATED' } });
      const noApiKey = await t.gql('{ freights { createdAt } }', { headers: { 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey } });
      expect(noApiKey.errors?.[0]?.message).toContain('x-marketplace-api-key');
      expect(await apiCalls()).toEqual([]);
    });

    it('maps a refused credential to UNAUTHENTICATED from the {error} body, without echoing it', async () => {
      const wrong = 'wrong-mkt-api-key-0d9c8b7a6f5e';
      knownSecrets.add(wrong);
      const result = await t.gql('{ questions(platform: "ALPHA") { edges { cursor } } labelGroups { id } }', { headers: { ...seller, 'x-marketplace-api-key': wrong } });
      expect(result.errors).toHaveLength(2);
      for (const error of result.errors!) expect(error).toMatchObject({ message: `marketplace: ${LOGIN_PROMPT}`, extensions: { code: 'UNAUTHENTICATED', status: 401 } });
      expect(JSON.stringify(result)).not.toContain(wrong);
    });

    it('sends the user token in place of e-mail and API key', async () => {
      const result = await t.gql('{ statusTypes { code } }', { headers: withUserToken });
      expect(result.errors).toBeUndefined();
      const [call] = await emulator.requests();
      expect(call!.headers).toEqual(expect.arrayContaining(['x-user-token', 'x-accountmanager-key', 'accept']));
      expect(call!.headers).not.toEqual(expect.arrayContaining(['x-api-key']));
      expect(call!.headers).not.toContain('x-user-email');
    });

    it('routes each credential to its own service only', async () => {
      const recognition = t.emulator('recognition');
      await recognition.clearRequests();
      const result = await t.gql('{ statusTypes { code } webhooks { id } }', { headers: { ...seller, 'x-marketplace-user-token': DEMO_CREDENTIALS.userToken, 'x-recognition-token': DEMO_TOKENS.admin } });
      expect(result.errors).toBeUndefined();
      const [marketplaceCall] = await emulator.requests();
      expect(marketplaceCall!.headers.sort()).toEqual(['accept', 'connection', 'host', 'x-accountmanager-key', 'x-api-key', 'x-user-email']);
      expect(marketplaceCall!.query).toEqual({});
      const [recognitionCall] = await recognition.requests();
      expect(recognitionCall!.headers.sort()).toEqual(['accept', 'connection', 'host']);
      expect(Object.keys(recognitionCall!.query)).toEqual(['access_token']);
    });
  });
});

describe('the real service’s dialect', () => {
  beforeEach(async () => {
    await emulator.dialect('real');
  });

  const sellerHeaders = { 'x-user-email': DEMO_CREDENTIALS.email, 'x-api-key': DEMO_CREDENTIALS.apiKey, 'x-accountmanager-key': DEMO_CREDENTIALS.accountKey, accept: 'application/json' };

  it('is what the emulator speaks after the switch: `{error}` failures, products with associations and a search without categories', async () => {
    const missing = await fetch(`${emulator.url}/questions/NOPE-1`, { headers: sellerHeaders });
    expect(await missing.json()).toEqual({ error: 'Question not found' });
    const page = (await (await fetch(`${emulator.url}/products`, { headers: sellerHeaders })).json()) as { products: Record<string, unknown>[] };
    expect(page.products[0]).toMatchObject({ removed: false, associations: [expect.objectContaining({ status: expect.any(String) })] });
    expect(page.products[0]).not.toHaveProperty('categories');
  });

  it('reads a product search without categories as products with none, and keeps them on the product itself', async () => {
    const listed = await t.gql<{ products: { edges: { node: { sku: string; categories: unknown[] } }[] } }>('{ products(first: 3) { edges { node { sku categories { code } } } } }', { headers: seller });
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.products.edges.map((edge) => edge.node.categories)).toEqual([[], [], []]);
    const one = await t.gql<{ product: { categories: unknown[] } }>('{ product(sku: "SKU-0002") { categories { code name } } }', { headers: seller });
    expect(one.data!.product.categories.length).toBeGreaterThan(0);
  });
});

describe('answers of the wrong shape', () => {
  it('is UPSTREAM_ERROR naming the missing part, never a question with an empty id', async () => {
    await emulator.fault({ path: '/questions', status: 200, body: { questions: [{ message: 'Does it ship?' }], cursor: null } });
    const result = await t.gql('{ questions(platform: "ALPHA") { edges { node { id message } } } }', { headers: seller });
    expect(result.data?.questions).toBeNull();
    expect(result.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^marketplace: listQuestions .*wrong shape.*questions\[0\]\.id/), extensions: { code: 'UPSTREAM_ERROR', service: 'marketplace', status: 200 } });
  });

  it('refuses labels nested deeper than a JSON value may be as UPSTREAM_ERROR at that field, the rest of the answer kept', async () => {
    const deep = JSON.parse(`${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`) as unknown;
    await emulator.fault({ path: `${SHIPMENTS}view`, method: 'GET', status: 200, body: deep, times: 1 });
    const result = await t.gql<{ products: { totalCount: number }; labelGroups: { id: string; labels: unknown }[] }>('{ products(first: 1) { totalCount } labelGroups { id labels } }', { headers: seller });
    expect(result.data?.products).toMatchObject({ totalCount: expect.any(Number) });
    expect(result.data?.labelGroups[0]!.labels).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]).toMatchObject({ message: 'marketplace: the service answered a value, which JSON cannot represent', path: ['labelGroups', 0, 'labels'], extensions: { code: 'UPSTREAM_ERROR', service: 'marketplace' } });
  });

  it('is UPSTREAM_ERROR when the next-page URL does not parse, never an internal error', async () => {
    for (const next of ['http://x:99999/products?page=2', 'http://[::1']) {
      await emulator.fault({ path: '/products', status: 200, body: { products: [], total: 5, next }, times: 1 });
      const result = await t.gql('{ products(status: "enabled", first: 2) { totalCount } }', { headers: seller });
      expect(result.errors?.[0], next).toMatchObject({ message: 'marketplace: the next-page URL does not parse', path: ['products'], extensions: { code: 'UPSTREAM_ERROR', service: 'marketplace' } });
    }
  });

  it('is UPSTREAM_ERROR when a list arrives as something else, never an empty list', async () => {
    await emulator.fault({ path: '/freights', status: 200, body: { freight: { created_at: '2026-11-01T10:00:00-03:00' } } });
    const result = await t.gql('{ freights { createdAt } }', { headers: seller });
    expect(result.data?.freights).toBeNull();
    expect(result.errors?.[0]).toMatchObject({ message: expect.stringContaining('freight'), extensions: { code: 'UPSTREAM_ERROR', service: 'marketplace' } });
  });
});
