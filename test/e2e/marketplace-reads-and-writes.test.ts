import { beforeEach, describe, expect, it } from 'vitest';
import { startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

// What one request reads of the marketplace: each distinct read once, and afresh after a write.
const t = await startTestStack();
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;
const SHIPMENTS = '/shipments/mkt/';

beforeEach(async () => {
  await emulator.reset();
});

const apiCalls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}`);

describe('writes in one mutation', () => {
  it('reads each new PLP from the list as it is after its own grouping', async () => {
    const result = await t.gql(
      `mutation {
        a: groupOrders(orderCodes: ["ORD-2010"]) { id expirationDate orders { code } }
        b: groupOrders(orderCodes: ["ORD-2011"]) { id expirationDate orders { code } }
      }`,
      { headers: seller },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      a: { id: '7003', expirationDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), orders: [{ code: 'ORD-2010' }] },
      b: { id: '7004', expirationDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), orders: [{ code: 'ORD-2011' }] },
    });
    expect(await apiCalls()).toEqual([`POST ${SHIPMENTS}`, `GET ${SHIPMENTS}`, `POST ${SHIPMENTS}`, `GET ${SHIPMENTS}`]);
  });

  it('reads a variation’s product afresh after each change to one of its variations', async () => {
    type Changed = { product: { variations: { sku: string; qty: number; price: number }[] } };
    const result = await t.gql<{ a: Changed; b: Changed }>(
      `mutation {
        a: updateVariation(sku: "SKU-0002-BLA", input: { qty: 7 }) { product { variations { sku qty price } } }
        b: updateVariationPrice(sku: "SKU-0002-BLA", price: 12.5) { product { variations { sku qty price } } }
      }`,
      { headers: seller },
    );
    expect(result.errors).toBeUndefined();
    const black = (changed: Changed) => changed.product.variations.find((variation) => variation.sku === 'SKU-0002-BLA');
    expect(black(result.data!.a)).toMatchObject({ qty: 7 });
    expect(black(result.data!.b)).toMatchObject({ qty: 7, price: 12.5 });
    expect(await apiCalls()).toEqual(['PUT /variations/SKU-0002-BLA', 'GET /products/SKU-0002', 'PUT /variations/SKU-0002-BLA', 'GET /products/SKU-0002']);
  });

  it('no longer shows a deleted variation on its product read later in the same mutation', async () => {
    await emulator.control('variations', { sku: 'SKU-0002-WHI', connected: false });
    type WithVariations = { product: { variations: { sku: string }[] } };
    const result = await t.gql<{ a: WithVariations; c: WithVariations }>(
      `mutation {
        a: updateVariation(sku: "SKU-0002-BLA", input: { qty: 3 }) { product { variations { sku } } }
        b: deleteVariation(sku: "SKU-0002-WHI") { sku }
        c: answerQuestion(id: "ALPHA-100037", answer: "Black only now.") { product { variations { sku } } }
      }`,
      { headers: seller },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.a.product.variations.map((variation) => variation.sku)).toEqual(['SKU-0002-BLA', 'SKU-0002-WHI']);
    expect(result.data!.c.product.variations.map((variation) => variation.sku)).toEqual(['SKU-0002-BLA']);
  });

  it('gives a created product’s variations their product without reading it back', async () => {
    const result = await t.gql(
      `mutation { createProduct(input: { sku: "QA-LAMP-03", name: "Lamp", variations: [{ sku: "QA-LAMP-03-BLK" }, { sku: "QA-LAMP-03-WHT" }] }) {
        sku variations { sku product { sku name } } } }`,
      { headers: seller },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      createProduct: {
        sku: 'QA-LAMP-03',
        variations: [
          { sku: 'QA-LAMP-03-BLK', product: { sku: 'QA-LAMP-03', name: 'Lamp' } },
          { sku: 'QA-LAMP-03-WHT', product: { sku: 'QA-LAMP-03', name: 'Lamp' } },
        ],
      },
    });
    expect(await apiCalls()).toEqual(['POST /products']);
  });
});

describe('identical reads in one operation', () => {
  it('costs one call for status types and one for freights, however many fields ask', async () => {
    const aliases = Array.from({ length: 12 }, (_, index) => `s${index}: statusTypes { code }`).join(' ');
    const result = await t.gql(`{ ${aliases} n: statusTypes { name } f1: freights { createdAt } f2: freights { saleSystem } }`, { headers: seller });
    expect(result.errors).toBeUndefined();
    expect((result.data as Record<string, unknown[]>).s11).toContainEqual({ code: 'shipped' });
    expect((await apiCalls()).sort()).toEqual(['GET /freights', 'GET /status_types']);
  });

  it('costs one call per distinct stock page, symbolic-return query, question page and product page', async () => {
    const result = await t.gql(
      `{
        s1: fulfillmentStock(recipientDocument: "12345678000190", first: 10) { edges { node { sku } } }
        s2: fulfillmentStock(recipientDocument: "12345678000190", first: 10) { pageInfo { hasNextPage } }
        s3: fulfillmentStock(recipientDocument: "12345678000190", first: 5) { edges { node { sku } } }
        r1: symbolicReturnInvoices(delivery: "DLV-901") { number }
        r2: symbolicReturnInvoices(delivery: "DLV-901") { xml }
        q1: questions(platform: "ALPHA", first: 5) { edges { node { id } } }
        q2: questions(platform: "ALPHA", first: 20) { edges { node { id } } }
        p1: products(first: 3) { edges { node { sku } } }
        p2: products(first: 10) { totalCount }
      }`,
      { headers: seller },
    );
    expect(result.errors).toBeUndefined();
    const log = await emulator.requests();
    const calls = (path: string) => log.filter((request) => request.path === path).map((request) => request.query);
    expect(calls('/fulfillment/mkt/stock')).toEqual([
      { recipient_document: '12345678000190', page: '1', per_page: '10' },
      { recipient_document: '12345678000190', page: '1', per_page: '5' },
    ]);
    expect(calls('/fulfillment/mkt/delivery/nfe')).toEqual([{ delivery: 'DLV-901' }]);
    expect(calls('/questions')).toEqual([{ platform: 'ALPHA' }]);
    expect(calls('/products')).toEqual([{}]);
    expect(log).toHaveLength(5);
  });
});

describe('limits checked before any call', () => {
  const tooLong = 'S'.repeat(26);

  it('refuses a SKU longer than the marketplace accepts, naming the argument', async () => {
    const operations = [
      `{ product(sku: "${tooLong}") { sku } }`,
      `{ variation(sku: "${tooLong}") { sku } }`,
      `{ fulfillmentStock(sku: "${tooLong}") { edges { cursor } } }`,
      `mutation { updateVariation(sku: "${tooLong}", input: { qty: 1 }) { sku } }`,
      `mutation { updateVariationPrice(sku: "${tooLong}", price: 1) { sku } }`,
      `mutation { deleteVariation(sku: "${tooLong}") { sku } }`,
    ];
    for (const operation of operations) {
      const result = await t.gql(operation, { headers: seller });
      expect(result.errors?.[0], operation).toMatchObject({ message: 'sku: must be at most 25 characters; got 26', extensions: { code: 'BAD_USER_INPUT', argument: 'sku' } });
    }
    expect(await apiCalls()).toEqual([]);

    expect(await t.gql(`{ product(sku: "${'S'.repeat(25)}") { sku } }`, { headers: seller })).toEqual({ data: { product: null } });
    expect(await apiCalls()).toEqual([`GET /products/${'S'.repeat(25)}`]);
  });

  it('refuses a price that two-place decimal text cannot carry, never sending exponent notation', async () => {
    for (const price of ['1e21', '1e15']) {
      const result = await t.gql(`mutation { updateVariationPrice(sku: "SKU-0001-BLA", price: ${price}) { sku } }`, { headers: seller });
      expect(result.errors?.[0], price).toMatchObject({ message: expect.stringContaining('must be at most 90071992547409.91'), extensions: { code: 'BAD_USER_INPUT', argument: 'price' } });
    }
    expect(await apiCalls()).toEqual([]);

    const large = await t.gql('mutation { updateVariationPrice(sku: "SKU-0001-BLA", price: 12345678901.25) { price specifications { key value } } }', { headers: seller });
    expect(large.errors).toBeUndefined();
    expect(large.data?.updateVariationPrice).toMatchObject({ price: 12345678901.25, specifications: expect.arrayContaining([{ key: 'price', value: '12345678901.25' }]) });
  });
});
