import { describe, expect, it } from 'vitest';
import { buildSchema, getOperationAST, parse } from 'graphql';
import { createDemandControl, readCostTable } from '../../gateway/demandControl.ts';

// A supergraph's shape as composition writes it: join directives name each field's subgraph.
const SUPERGRAPH = `
enum join__Graph { SHOP @join__graph(name: "shop", url: "http://shop") BLOG @join__graph(name: "blog", url: "http://blog") }
type Query @join__type(graph: SHOP) @join__type(graph: BLOG) {
  items(ids: [ID!]! @cost(weight: 1)): [Item] @join__field(graph: SHOP) @cost(weight: 0) @listSize(assumedSize: 100)
  orders(first: Int): OrderConnection @join__field(graph: SHOP) @cost(weight: 3) @listSize(slicingArguments: ["first"], sizedFields: ["edges"], assumedSize: 10, requireOneSlicingArgument: false)
  posts: [Post] @join__field(graph: BLOG)
  version: String @join__field(graph: BLOG)
}
type Item @join__type(graph: SHOP) { id: ID! maker: Maker @cost(weight: 1) }
type Maker @join__type(graph: SHOP) { name: String }
type OrderConnection @join__type(graph: SHOP) { edges: [OrderEdge!]! }
type OrderEdge @join__type(graph: SHOP) { node: Order! }
type Order @join__type(graph: SHOP) { id: ID! item: Item @cost(weight: 1) }
type Post @join__type(graph: BLOG) { author: Maker @cost(weight: 2) }
`;
const API = buildSchema(`
type Query { items(ids: [ID!]!): [Item] orders(first: Int): OrderConnection posts: [Post] version: String }
type Item { id: ID! maker: Maker } type Maker { name: String }
type OrderConnection { edges: [OrderEdge!]! } type OrderEdge { node: Order! } type Order { id: ID! item: Item }
type Post { author: Maker }
`);
const demand = createDemandControl({ schema: API, costs: readCostTable(SUPERGRAPH), maxUpstreamCalls: 500, defaultListSize: 20 });
const estimate = (query: string, variables?: Record<string, unknown>) => {
  const document = parse(query);
  return demand.estimate(document, getOperationAST(document)!, variables);
};

describe('the upstream call estimate', () => {
  it('charges a list argument per element, and what each element selects by the list’s assumed size', () => {
    expect(estimate('{ items(ids: ["a", "b", "c"]) { id } }').calls).toBe(3);
    expect(estimate('{ items(ids: ["a", "b", "c"]) { maker { name } } }').calls).toBe(3 + 100);
    expect(estimate('query ($ids: [ID!]!) { items(ids: $ids) { id } }', { ids: ['a', 'b'] }).calls).toBe(2);
  });

  it('sizes a connection’s edges by its slicing argument, else by its assumed size', () => {
    expect(estimate('{ orders(first: 7) { edges { node { item { id } } } } }').calls).toBe(3 + 7);
    expect(estimate('query ($n: Int) { orders(first: $n) { edges { node { item { maker { name } } } } } }', { n: 4 }).calls).toBe(3 + 4 + 4);
    expect(estimate('{ orders { edges { node { id } } } }').calls).toBe(3);
    expect(estimate('{ orders { edges { node { item { id } } } } }').calls).toBe(3 + 10);
  });

  it('costs root fields 1 unless declared, multiplies undeclared lists by the default size, and counts aliases and fragments', () => {
    expect(estimate('{ version a: version b: version }').calls).toBe(3);
    expect(estimate('{ posts { author { name } } }').calls).toBe(1 + 20 * 2);
    expect(estimate('{ ...F ...F } fragment F on Query { items(ids: ["a"]) { ... on Item { maker { name } } } }').calls).toBe(2 * (1 + 100));
  });

  it('attributes each call to the subgraph that makes it', () => {
    const found = estimate('{ items(ids: ["a"]) { id } posts { author { name } } }');
    expect(Object.fromEntries(found.bySubgraph)).toEqual({ shop: 1, blog: 41 });
  });

  it('refuses past the budget with the estimate and the budget', () => {
    const document = parse('query ($ids: [ID!]!) { items(ids: $ids) { maker { name } } }');
    const checked = demand.check(document, getOperationAST(document)!, { ids: Array.from({ length: 401 }, (_, index) => String(index)) });
    expect('error' in checked && checked.error.extensions).toEqual({ code: 'OPERATION_TOO_EXPENSIVE', estimate: 501, budget: 500 });
  });
});

describe('estimates of a repeat operation', () => {
  it('are walked once per costing form of the variables, and never shared between variables that cost differently', () => {
    const document = parse('query ($ids: [ID!]!, $n: Int, $label: String) { items(ids: $ids) { id } orders(first: $n) { edges { node { item { id } } } } version @skip(if: false) }');
    const operation = getOperationAST(document)!;
    const first = demand.estimate(document, operation, { ids: ['a', 'b'], n: 4, label: 'x' });
    expect(first.calls).toBe(2 + 3 + 4 + 1);
    // Other ids of the same number, another label: the same estimate, not walked again.
    expect(demand.estimate(document, operation, { ids: ['c', 'd'], n: 4, label: 'y' })).toBe(first);
    // Another list length, another size, no size: each its own estimate.
    expect(demand.estimate(document, operation, { ids: ['a', 'b', 'c'], n: 4 }).calls).toBe(3 + 3 + 4 + 1);
    expect(demand.estimate(document, operation, { ids: ['a', 'b'], n: 9 }).calls).toBe(2 + 3 + 9 + 1);
    expect(demand.estimate(document, operation, { ids: ['a', 'b'] }).calls).toBe(2 + 3 + 10 + 1);
    expect(demand.estimate(document, operation, { ids: ['a', 'b'], n: '4' }).calls).toBe(2 + 3 + 10 + 1);
    expect(demand.estimate(document, operation, { ids: ['e', 'f'], n: 4, label: 'z' })).toBe(first);
  });

  it('keep a bounded number of forms per operation', () => {
    const document = parse('query ($n: Int) { orders(first: $n) { edges { node { item { id } } } } }');
    const operation = getOperationAST(document)!;
    const firstOfMany = demand.estimate(document, operation, { n: 0 });
    for (let n = 1; n <= 100; n += 1) expect(demand.estimate(document, operation, { n }).calls).toBe(3 + n);
    // The first form was forgotten: walked again, to the same answer.
    const again = demand.estimate(document, operation, { n: 0 });
    expect(again).not.toBe(firstOfMany);
    expect(again).toEqual(firstOfMany);
  });

  it('are the same for another parse of the same text, made afresh', () => {
    const text = '{ items(ids: ["a"]) { maker { name } } }';
    const one = parse(text);
    const two = parse(text);
    expect(demand.estimate(two, getOperationAST(two)!)).toEqual(demand.estimate(one, getOperationAST(one)!));
  });
});
