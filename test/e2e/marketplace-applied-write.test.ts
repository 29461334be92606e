import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, startTestStack, type GraphQLResult } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

// groupOrders is a POST answering only the new PLP's id; its orders are read from the PLP list
// afterwards. When only that read fails, the PLP exists and its orders are grouped (grouping them
// again is refused), so the client must learn the id and not send the mutation again.
const t = await startTestStack();
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;
const SHIPMENTS = '/shipments/mkt/';

beforeEach(async () => {
  await emulator.reset();
});

const calls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path} ${request.status}`);
type Group = { id: string; expirationDate?: string | null; orders?: { code: string }[] };

function expectAppliedButUnread(error: NonNullable<GraphQLResult['errors']>[number] | undefined, path: string[], cause: Record<string, unknown>) {
  expect(error?.path).toEqual(path);
  expect(error?.extensions).toMatchObject({ ...cause, service: 'marketplace', writeOutcome: 'APPLIED', resourceId: '7003' });
  expect(error?.message).toMatch(/^marketplace: the service created the label group 7003, but reading it back failed \(.+\)\. Do not send the mutation again/);
  expect(error?.message).toContain('labelGroup(id: "7003")');
}

describe.each(DIALECTS)('a groupOrders whose read of the new PLP fails, %s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.dialect(dialect);
  });

  it('names the created PLP in the error when its orders cannot be read, and the PLP can then be read', async () => {
    await emulator.fault({ path: SHIPMENTS, method: 'GET', status: 500, times: 1 });
    const result = await t.gql<{ groupOrders: Group | null }>('mutation { groupOrders(orderCodes: ["ORD-2010"]) { id orders { code } } }', { headers: seller });
    // `orders` is non-null: its failure nulls the payload, so the error is where the id survives.
    expect(result.data).toEqual({ groupOrders: null });
    expect(result.errors).toHaveLength(1);
    expectAppliedButUnread(result.errors![0], ['groupOrders', 'orders'], { code: 'UPSTREAM_ERROR', status: 500 });
    expect(await calls()).toEqual([`POST ${SHIPMENTS} 200`, `GET ${SHIPMENTS} 500`]);

    const read = await t.gql<{ labelGroup: Group }>('{ labelGroup(id: "7003") { id orders { code } } }', { headers: seller });
    expect(read).toEqual({ data: { labelGroup: { id: '7003', orders: [{ code: 'ORD-2010' }] } } });
  });

  it('keeps the id in the payload and says the PLP was created when only a nullable field’s read fails', async () => {
    await emulator.fault({ path: SHIPMENTS, method: 'GET', status: 503, times: 3 });
    const result = await t.gql<{ groupOrders: Group | null }>('mutation { groupOrders(orderCodes: ["ORD-2010"]) { id expirationDate } }', { headers: seller });
    expect(result.data).toEqual({ groupOrders: { id: '7003', expirationDate: null } });
    expectAppliedButUnread(result.errors?.[0], ['groupOrders', 'expirationDate'], { code: 'UPSTREAM_ERROR', status: 503 });
    expect(await calls()).toEqual([`POST ${SHIPMENTS} 200`, `GET ${SHIPMENTS} 503`, `GET ${SHIPMENTS} 503`, `GET ${SHIPMENTS} 503`]);
  });

  it('does not call a PLP it has just created NOT_FOUND when the list leaves it out', async () => {
    await emulator.fault({ path: SHIPMENTS, method: 'GET', status: 200, body: { plp: [] }, times: 1 });
    const result = await t.gql<{ groupOrders: Group | null }>('mutation { groupOrders(orderCodes: ["ORD-2010"]) { id orders { code } } }', { headers: seller });
    expect(result.data).toEqual({ groupOrders: null });
    expectAppliedButUnread(result.errors?.[0], ['groupOrders', 'orders'], { code: 'UPSTREAM_ERROR' });
    expect(await calls()).toEqual([`POST ${SHIPMENTS} 200`, `GET ${SHIPMENTS} 200`]);
  });

  it('answers a new PLP read well without error, and an unknown PLP looked up by id as null', async () => {
    const result = await t.gql<{ groupOrders: Group | null }>('mutation { groupOrders(orderCodes: ["ORD-2010"]) { id orders { code } } }', { headers: seller });
    expect(result).toEqual({ data: { groupOrders: { id: '7003', orders: [{ code: 'ORD-2010' }] } } });
    expect(await t.gql('{ labelGroup(id: "7999") { id orders { code } } }', { headers: seller })).toEqual({ data: { labelGroup: null } });
  });
});
