import { execute, getOperationAST, parse, type ExecutionResult } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compiledExecution, type Executor } from '../../subgraphs/kit/compiledExecution.ts';

/**
 * Lists whose items settle in any order, some failing: compiled execution answers exactly as
 * graphql-js does, one entry per item at every depth. graphql-jit once appended a rejected item's
 * `null` at the end of its list instead of at its index.
 */

/** How one item ends: a value, `null`, a rejection (with an error or a bare string), or an `Error` returned. */
const OUTCOMES = ['value', 'null', 'reject', 'rejectString', 'error'] as const;
type Leaf = { outcome: (typeof OUTCOMES)[number]; async: boolean; rank: number };
/** An item of an outer list: an inner list of leaves, or `null`, or a rejection; itself maybe a promise. */
type Inner = { outcome: 'list' | 'null' | 'reject'; async: boolean; rank: number; items: Leaf[] };
type Plan = { items: Leaf[]; nestedItems: Inner[] };

/** `required`: items that cannot be null, so that one failing nulls its whole list. */
const FIELDS = {
  items: { type: '[Item]', nested: false, required: false, selection: '{ id label }' },
  requiredItems: { type: '[Item!]', nested: false, required: true, selection: '{ id label }' },
  labels: { type: '[String]', nested: false, required: false, selection: '' },
  requiredLabels: { type: '[String!]!', nested: false, required: true, selection: '' },
  groups: { type: '[[Item]]', nested: true, required: false, selection: '{ id }' },
  requiredGroups: { type: '[[Item!]]', nested: true, required: true, selection: '{ id }' },
} as const;
type FieldName = keyof typeof FIELDS;

const typeDefs = parse(`
  type Query { ${Object.entries(FIELDS)
    .map(([name, { type }]) => `${name}: ${type}`)
    .join(' ')} }
  type Item { id: ID! label: String }
`);

/** The promises of one run, settled one at a time by rank (ties in the order they were made). */
interface Run {
  pending: { rank: number; settle: () => void }[];
}

function later<T>(run: Run, rank: number, settle: (resolve: (value: T) => void, reject: (reason: unknown) => void) => void): Promise<T> {
  const promise = new Promise<T>((resolve, reject) => run.pending.push({ rank, settle: () => settle(resolve, reject) }));
  // An executor that gave up on a list never awaits the rest of its items: not a failure of this test.
  promise.catch(() => {});
  return promise;
}

function leafValue(run: Run, leaf: Leaf, index: number, asObject: boolean): unknown {
  const value = asObject ? { id: `i${index}`, label: `l${index}` } : `l${index}`;
  const settle = (resolve: (value: unknown) => void, reject: (reason: unknown) => void) => {
    if (leaf.outcome === 'value') resolve(value);
    else if (leaf.outcome === 'null') resolve(null);
    else if (leaf.outcome === 'error') resolve(new Error(`returned ${index}`));
    else if (leaf.outcome === 'reject') reject(new Error(`rejected ${index}`));
    else reject(`bare ${index}`);
  };
  if (leaf.async) return later(run, leaf.rank, settle);
  if (leaf.outcome === 'reject' || leaf.outcome === 'rejectString') return later(run, -1, settle);
  let now: unknown;
  settle((resolved) => (now = resolved), () => {});
  return now;
}

function innerValue(run: Run, inner: Inner, index: number): unknown {
  const list = () => inner.items.map((leaf, at) => leafValue(run, leaf, index * 10 + at, true));
  if (!inner.async && inner.outcome !== 'reject') return inner.outcome === 'null' ? null : list();
  return later<unknown>(run, inner.async ? inner.rank : -1, (resolve, reject) => {
    if (inner.outcome === 'list') resolve(list());
    else if (inner.outcome === 'null') resolve(null);
    else reject(new Error(`rejected group ${index}`));
  });
}

function schemaFor(plan: Plan, run: Run) {
  const resolvers = Object.fromEntries(
    (Object.keys(FIELDS) as FieldName[]).map((name) => [
      name,
      () => (FIELDS[name].nested ? plan.nestedItems.map((inner, index) => innerValue(run, inner, index)) : plan.items.map((leaf, index) => leafValue(run, leaf, index, !name.toLowerCase().includes('labels')))),
    ]),
  );
  return buildSubgraphSchema({ typeDefs, resolvers: { Query: resolvers } as never });
}

/** Runs `start`, then settles the run's promises by rank, letting every handler run between two. */
async function settled(run: Run, start: () => Promise<ExecutionResult> | ExecutionResult): Promise<ExecutionResult> {
  const result = Promise.resolve(start());
  for (;;) {
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    if (run.pending.length === 0) break;
    const next = run.pending.reduce((first, entry) => (entry.rank < first.rank ? entry : first));
    run.pending.splice(run.pending.indexOf(next), 1);
    next.settle();
  }
  return result;
}

async function bothWays(plan: Plan, field: FieldName) {
  const query = `{ ${field} ${FIELDS[field].selection} }`;
  const document = parse(query);

  const interpretedRun: Run = { pending: [] };
  const interpretedSchema = schemaFor(plan, interpretedRun);
  const interpreted = await settled(interpretedRun, () => execute({ schema: interpretedSchema, document, contextValue: {} }) as Promise<ExecutionResult>);

  const compiledRun: Run = { pending: [] };
  const { executor } = await compiledExecution(schemaFor(plan, compiledRun)).load({ apollo: {} } as never);
  const request = { document, operation: getOperationAST(document), operationName: null, queryHash: query, request: { query, variables: {} }, context: {} } as unknown as Parameters<Executor>[0];
  const compiled = await settled(compiledRun, () => executor!(request) as Promise<ExecutionResult>);
  // As Apollo Server writes either: data, then errors.
  const asSent = ({ data, errors }: ExecutionResult) => JSON.stringify({ data, errors });
  return { compiled: asSent(compiled), interpreted: asSent(interpreted) };
}

type Answer = { data?: Record<string, unknown> | null; errors?: { path: (string | number)[] }[] };

/** The value at `path` in `data` (undefined where a step is missing). */
function at(data: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((value, step) => (value === null || typeof value !== 'object' ? undefined : (value as Record<string, unknown>)[step]), data);
}

/**
 * Where items cannot be null, graphql-js reports only the failure that nulled their list first and
 * drops those of the items that fail after it; graphql-jit reports every one (as it does for root
 * fields: compiledExecution.ts), and files them after the other errors.
 * The data must be the same; graphql-js's errors all there; each further one an item of a nulled list.
 */
function expectAlike(compiledText: string, interpretedText: string) {
  const compiled = JSON.parse(compiledText) as Answer;
  const interpreted = JSON.parse(interpretedText) as Answer;
  expect(compiled.data).toEqual(interpreted.data);
  const errors = (compiled.errors ?? []).map((error) => JSON.stringify(error));
  const expected = (interpreted.errors ?? []).map((error) => JSON.stringify(error));
  expect(errors).toEqual(expect.arrayContaining(expected));
  for (const extra of (compiled.errors ?? []).filter((error) => !expected.includes(JSON.stringify(error)))) {
    expect(at(compiled.data, extra.path.slice(0, -1)), `the list holding ${JSON.stringify(extra.path)}`).toBeNull();
  }
}

const leaf = fc.record({ outcome: fc.constantFrom(...OUTCOMES), async: fc.boolean(), rank: fc.nat(20) });
const plan: fc.Arbitrary<Plan> = fc.record({
  items: fc.array(leaf, { maxLength: 6 }),
  nestedItems: fc.array(fc.record({ outcome: fc.constantFrom('list' as const, 'list' as const, 'null' as const, 'reject' as const), async: fc.boolean(), rank: fc.nat(20), items: fc.array(leaf, { maxLength: 4 }) }), { maxLength: 4 }),
});

/**
 * graphql-js 16 gives up on a list of non-null items at a failing item it meets synchronously,
 * leaving the promises of the items before it to reject with nobody listening (an unhandled
 * rejection, which fails the run): there every item is a promise.
 */
function allAsync({ items, nestedItems }: Plan): Plan {
  return { items: items.map((item) => ({ ...item, async: true })), nestedItems: nestedItems.map((inner) => ({ ...inner, async: true, items: inner.items.map((item) => ({ ...item, async: true })) })) };
}

describe('compiled execution of lists whose items fail', () => {
  it('keeps a rejected item at its index when the items ahead of it arrive later', async () => {
    const arriving = (rank: number): Leaf => ({ outcome: 'value', async: true, rank });
    const failingFirst: Plan = { items: [arriving(1), arriving(2), arriving(3), { outcome: 'reject', async: true, rank: 0 }], nestedItems: [] };
    const { compiled, interpreted } = await bothWays(failingFirst, 'items');
    expect(JSON.parse(compiled)).toEqual({ data: { items: [{ id: 'i0', label: 'l0' }, { id: 'i1', label: 'l1' }, { id: 'i2', label: 'l2' }, null] }, errors: [{ message: 'rejected 3', locations: [{ line: 1, column: 3 }], path: ['items', 3] }] });
    expect(compiled).toBe(interpreted);
  });

  it.each(Object.keys(FIELDS) as FieldName[])('answers %s as graphql-js does, whatever order its items settle in', async (field) => {
    await fc.assert(
      fc.asyncProperty(plan, async (generated) => {
        const { compiled, interpreted } = await bothWays(FIELDS[field].required ? allAsync(generated) : generated, field);
        if (FIELDS[field].required) expectAlike(compiled, interpreted);
        else expect(compiled).toBe(interpreted);
      }),
      { numRuns: 50 },
    );
  });
});
