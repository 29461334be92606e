import { beforeEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * A list whose items fail at different times, on the subgraphs' compiled execution and on
 * graphql-js: the same bytes, one entry per id asked, each failing id `null` with its error at its
 * own index. graphql-jit once appended a failing item's `null` at the end of the list, so an item
 * that failed before earlier ones arrived was overwritten by them: the list came back short.
 */
const compiled = await startTestStack();
const interpreted = await startTestStack({ SUBGRAPH_COMPILED_EXECUTION: 'off' });
const STACKS = [compiled, interpreted];

const redemptionPath = (id: string) => `/api/v1/redemptions/${id}`;

async function post(stack: TestStack, url: string, body: unknown) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...stack.stack.demoHeaders }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

/** How the emulator answers one id: after `ms`, with `status` in place of the redemption when set. */
type Upstream = Record<string, { ms?: number; status?: number }>;

/**
 * The same faults on both stacks' emulators, so the ids settle in the same order on both (failures
 * that race are spaced apart: the errors' order is compared too).
 */
async function arrange(upstream: Upstream) {
  for (const stack of STACKS) {
    const emulator = stack.emulator('recognition');
    await emulator.reset();
    for (const [id, { ms, status }] of Object.entries(upstream)) {
      await emulator.fault({ path: redemptionPath(id), ...(ms ? { latencyMs: ms } : {}), ...(status ? { status, body: { success: false, message: `redemption ${id} failed` } } : {}) });
    }
  }
}

/** The ids asked upstream, each once per request whatever the executor. */
async function redemptionCalls(stack: TestStack): Promise<string[]> {
  const requests = await stack.emulator('recognition').requests();
  return requests.filter((request) => request.path.startsWith(redemptionPath(''))).map((request) => request.path.slice(redemptionPath('').length)).sort();
}

const QUERY = 'query ($ids: [ID!]!) { redemptions(ids: $ids) { id state reward { name } } }';
const SLOW = 250;

const CASES: { name: string; ids: string[]; upstream: Upstream }[] = [
  { name: 'the last id failing before three slow ones', ids: ['rd_001', 'rd_002', 'rd_003', 'rd_bad'], upstream: { rd_001: { ms: SLOW }, rd_002: { ms: SLOW }, rd_003: { ms: SLOW }, rd_bad: { status: 500 } } },
  { name: 'the last of two failing first', ids: ['rd_004', 'rd_bad'], upstream: { rd_004: { ms: SLOW }, rd_bad: { status: 500 } } },
  { name: 'the first failing first', ids: ['rd_bad', 'rd_005'], upstream: { rd_005: { ms: SLOW }, rd_bad: { status: 500 } } },
  { name: 'a middle id failing after a later one arrived', ids: ['rd_006', 'rd_bad', 'rd_007'], upstream: { rd_006: { ms: 2 * SLOW }, rd_bad: { ms: SLOW, status: 500 } } },
  { name: 'several failing ids between slow ones', ids: ['rd_bad1', 'rd_008', 'rd_bad2', 'rd_009', 'rd_bad3'], upstream: { rd_008: { ms: SLOW }, rd_009: { ms: SLOW }, rd_bad1: { ms: 120, status: 500 }, rd_bad2: { ms: 60, status: 403 }, rd_bad3: { status: 500 } } },
  { name: 'every id failing', ids: ['rd_bad1', 'rd_bad2'], upstream: { rd_bad1: { ms: SLOW, status: 500 }, rd_bad2: { status: 403 } } },
  { name: 'an absent id (null without an error) before a slow one', ids: ['rd_010', 'rd_bad'], upstream: { rd_010: { ms: SLOW }, rd_bad: { status: 404 } } },
];

describe('a list with failing items, compiled and on graphql-js', () => {
  beforeEach(async () => {
    for (const stack of STACKS) await stack.emulator('recognition').reset();
  });

  it.each(CASES)('answers $name alike, one entry per id, first time and repeat', async ({ ids, upstream }) => {
    const failing = (id: string) => (upstream[id]?.status ?? 200) >= 400;
    const erring = (id: string) => failing(id) && upstream[id]?.status !== 404;
    for (let round = 0; round < 2; round++) {
      await arrange(upstream);
      const [actual, expected] = await Promise.all(STACKS.map((stack) => post(stack, stack.graphqlUrl, { query: QUERY, variables: { ids } })));
      expect(actual).toEqual(expected);
      const answer = JSON.parse(actual!.text) as { data: { redemptions: ({ id: string } | null)[] }; errors?: { path: (string | number)[] }[] };
      expect(answer.data.redemptions).toHaveLength(ids.length);
      expect(answer.data.redemptions.map((redemption) => redemption?.id ?? null)).toEqual(ids.map((id) => (failing(id) ? null : id)));
      // In the order they failed, on both executors alike: their indexes are what matters here.
      expect((answer.errors?.map((error) => error.path) ?? []).sort()).toEqual(ids.flatMap((id, index) => (erring(id) ? [['redemptions', index]] : [])));
      for (const stack of STACKS) expect(await redemptionCalls(stack)).toEqual([...ids].sort());
    }
  });

  it('answers the gateway’s entity fetches alike when a reference fails before the others', async () => {
    const ids = ['rd_011', 'rd_012', 'rd_bad'];
    await arrange({ rd_011: { ms: SLOW }, rd_012: { ms: SLOW }, rd_bad: { status: 500 } });
    const body = {
      query: 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Redemption { id state } } }',
      variables: { representations: ids.map((id) => ({ __typename: 'Redemption', id })) },
    };
    const subgraphUrl = (stack: TestStack) => stack.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
    const [actual, expected] = await Promise.all(STACKS.map((stack) => post(stack, subgraphUrl(stack), body)));
    expect(actual).toEqual(expected);
    const answer = JSON.parse(actual!.text) as { data: { _entities: unknown[] } };
    expect(answer.data._entities).toHaveLength(ids.length);
    expect(answer.data._entities[2]).toBeNull();
  });
});

