import { beforeEach, describe, expect, it } from 'vitest';
import { expectAppliedButUnread } from '../support/appliedWrites.ts';
import { DIALECTS, startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

// createProduct, answerQuestion, updateVariation and updateVariationPrice write, then read the
// resource back when the service's 2xx does not carry it (the spec shows no answer to product creation
// nor to a variation's change). The write has happened by then: a failed read-back, or one
// that finds nothing, must not read as a failed write, or a client sends it again (CONFLICT for a
// product or an answer). The emulators always answer a write with its resource, so a fault answers
// the write with an empty 2xx and another fails the read.
const t = await startTestStack();
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;

interface Case {
  field: string;
  mutation: string;
  write: { method: string; path: string; status: number };
  /** The path of the read-back. */
  read: string;
  what: string;
  id: string;
  follow: string;
  /** A 2xx answer that holds the resource's key but not in its declared shape. */
  malformed: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    field: 'createProduct',
    mutation: 'mutation { createProduct(input: { sku: "QA-NEW-01", name: "Lamp" }) { sku } }',
    write: { method: 'POST', path: '/products', status: 201 },
    read: '/products/QA-NEW-01',
    what: 'the service created the product',
    id: 'QA-NEW-01',
    follow: 'product(sku: "QA-NEW-01")',
    malformed: { sku: ['QA-NEW-01'] },
  },
  {
    field: 'answerQuestion',
    mutation: 'mutation { answerQuestion(id: "ALPHA-100037", answer: "Yes.") { id } }',
    write: { method: 'POST', path: '/questions/ALPHA-100037/answer', status: 200 },
    read: '/questions/ALPHA-100037',
    what: 'the service recorded the answer to the question',
    id: 'ALPHA-100037',
    follow: 'question(id: "ALPHA-100037")',
    malformed: { id: 'ALPHA-100037', answered: 'perhaps' },
  },
  {
    field: 'updateVariation',
    mutation: 'mutation { updateVariation(sku: "SKU-0001-BLA", input: { qty: 7 }) { sku } }',
    write: { method: 'PUT', path: '/variations/SKU-0001-BLA', status: 200 },
    read: '/variations/SKU-0001-BLA',
    what: 'the service updated the variation',
    id: 'SKU-0001-BLA',
    follow: 'variation(sku: "SKU-0001-BLA")',
    malformed: { variation: { qty: 7 } },
  },
  {
    field: 'updateVariationPrice',
    mutation: 'mutation { updateVariationPrice(sku: "SKU-0001-BLA", price: 49.9) { sku } }',
    write: { method: 'PUT', path: '/variations/SKU-0001-BLA', status: 200 },
    read: '/variations/SKU-0001-BLA',
    what: 'the service updated the variation',
    id: 'SKU-0001-BLA',
    follow: 'variation(sku: "SKU-0001-BLA")',
    malformed: { variation: { qty: 7 } },
  },
];

const calls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path} ${request.status}`);
/** The write answered 2xx without the resource (an empty body), so the resolver reads it back. */
const answerEmpty = ({ write }: Case) => emulator.fault({ ...write, times: 1 });
const run = async ({ field, mutation }: Case) => {
  const result = await t.gql(mutation, { headers: seller });
  expect(result.data).toEqual({ [field]: null });
  expect(result.errors).toHaveLength(1);
  return result.errors![0];
};

describe.each(DIALECTS)('a marketplace write whose resource cannot be read, %s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.reset();
    await emulator.dialect(dialect);
  });

  it.each(CASES)('$field: a read-back that fails names what was written, keeping the read’s code and status', async (row) => {
    await answerEmpty(row);
    await emulator.fault({ path: row.read, method: 'GET', status: 500, times: 1 });
    expectAppliedButUnread(await run(row), { ...row, service: 'marketplace', path: [row.field], cause: { code: 'UPSTREAM_ERROR', status: 500 } });
    expect(await calls()).toEqual([`${row.write.method} ${row.write.path} ${row.write.status}`, `GET ${row.read} 500`]);
  });

  it.each(CASES)('$field: a read-back that finds nothing is UPSTREAM_ERROR with writeOutcome APPLIED, never a silent null', async (row) => {
    await answerEmpty(row);
    await emulator.fault({ path: row.read, method: 'GET', status: 404, body: { errors: ['Not found'] }, times: 1 });
    expectAppliedButUnread(await run(row), { ...row, service: 'marketplace', path: [row.field], cause: { code: 'UPSTREAM_ERROR', status: 404 } });
    expect(await calls()).toEqual([`${row.write.method} ${row.write.path} ${row.write.status}`, `GET ${row.read} 404`]);
  });

  it.each(CASES)('$field: an answer that holds the resource in the wrong shape says the write was applied, without a read', async (row) => {
    await emulator.fault({ ...row.write, body: row.malformed, times: 1 });
    const error = await run(row);
    expectAppliedButUnread(error, { ...row, service: 'marketplace', path: [row.field], cause: { code: 'UPSTREAM_ERROR', status: row.write.status } });
    expect(error?.message).toContain('answered a body of the wrong shape');
    expect(await calls()).toEqual([`${row.write.method} ${row.write.path} ${row.write.status}`]);
  });

  it('names the product when the answer to its creation is not JSON', async () => {
    const [row] = CASES;
    await emulator.fault({ ...row!.write, raw: '<html>Created</html>', contentType: 'text/html', times: 1 });
    expectAppliedButUnread(await run(row!), { ...row!, service: 'marketplace', path: [row!.field], cause: { code: 'UPSTREAM_ERROR', status: 201 } });
  });

  it.each(CASES.slice(1))('$field: answers what the read-back found when the write’s answer does not carry it', async (row) => {
    await answerEmpty(row);
    expect(await t.gql(row.mutation, { headers: seller })).toEqual({ data: { [row.field]: { [row.field === 'answerQuestion' ? 'id' : 'sku']: row.id } } });
    expect(await calls()).toEqual([`${row.write.method} ${row.write.path} ${row.write.status}`, `GET ${row.read} 200`]);
  });
});
