import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeServices } from '@apollo/composition';
import { operationFromDocument } from '@apollo/federation-internals';
import type { FetchNode } from '@apollo/query-planner';
import { createPlanner } from '../../gateway/planner.ts';
import { GATEWAY_OPERATION_LIMITS, SUBGRAPH_OPERATION_LIMITS, type Measure, type OperationLimits } from '../../lib/operationShapeLimits.ts';
import { composeWithKudos } from '../support/kudosSubgraph.ts';
import { AT_GATEWAY_LIMITS, measureOf, queryAtGatewayLimits, subscriptionAtGatewayLimits } from '../support/operationsAtLimits.ts';

/** Every fetch of a plan, wherever it sits (sequence, parallel, flatten, subscription). */
function fetchesOf(node: unknown, into: FetchNode[] = []): FetchNode[] {
  if (!node || typeof node !== 'object') return into;
  if ((node as { kind?: unknown }).kind === 'Fetch') into.push(node as FetchNode);
  else for (const value of Object.values(node)) fetchesOf(value, into);
  return into;
}

const exceeds = (measure: Measure, limits: OperationLimits) =>
  measure.depth > limits.maxDepth || measure.fields > limits.maxFields || measure.aliases > limits.maxAliases || measure.topFields > limits.maxRootFields;

/** What each fetch asks its subgraph, measured as the subgraph's rule measures it. */
const measured = (fetches: FetchNode[]) => fetches.map((fetch) => ({ service: fetch.serviceName, operation: fetch.operation, ...measureOf(fetch.operation) }));

describe("the subgraphs' shape limits", () => {
  it('are four times the gateway defaults', () => {
    expect(SUBGRAPH_OPERATION_LIMITS).toEqual({ maxDepth: 48, maxFields: 4000, maxAliases: 400, maxRootFields: 200, maxTokens: 80_000, maxDefinitions: 1000 });
  });

  it("take every fetch planned for a query at the gateway's four limits", () => {
    const query = queryAtGatewayLimits('d_1');
    expect(measureOf(query)).toEqual(AT_GATEWAY_LIMITS);
    const planner = createPlanner(readFileSync(new URL('../../schema/supergraph.graphql', import.meta.url), 'utf8'));
    const fetches = measured(fetchesOf(planner.queryPlanner.buildQueryPlan(operationFromDocument(planner.apiSchema, parse(query)))));
    expect(new Set(fetches.map((fetch) => fetch.service))).toEqual(new Set(['recognition', 'dashboards']));
    expect(fetches.filter((fetch) => exceeds(fetch, SUBGRAPH_OPERATION_LIMITS))).toEqual([]);
    // The dashboards fetch is as deep as the client's operation.
    expect(Math.max(...fetches.map((fetch) => fetch.depth))).toBe(GATEWAY_OPERATION_LIMITS.maxDepth);
  });

  it("take a subscription's fetches, entity fetches to a second subgraph included, though the gateway asks for more than its own limits", () => {
    const subscription = subscriptionAtGatewayLimits();
    expect(measureOf(subscription)).toMatchObject({ fields: GATEWAY_OPERATION_LIMITS.maxFields, aliases: GATEWAY_OPERATION_LIMITS.maxAliases });
    const planner = createPlanner(composeWithKudos('http://recognition.invalid/graphql', 'http://kudos.invalid/graphql'));
    const plan = planner.plan(parse(subscription), undefined);
    if (!('queryPlan' in plan)) throw new Error(`not planned: ${plan.map((error) => error.message).join('; ')}`);
    const fetches = measured(fetchesOf(plan.queryPlan));
    const kudos = fetches.filter((fetch) => fetch.service === 'kudos');
    expect(kudos.length).toBeGreaterThan(0);
    for (const fetch of kudos) expect(fetch.operation).toContain('_entities(representations:');
    // The cursor alias the gateway adds for resuming: one over the gateway's own alias limit.
    const primary = fetches.find((fetch) => fetch.service === 'recognition')!;
    expect(primary.aliases).toBe(GATEWAY_OPERATION_LIMITS.maxAliases + 1);
    expect(fetches.filter((fetch) => exceeds(fetch, SUBGRAPH_OPERATION_LIMITS))).toEqual([]);
  });

  it('take a fetch at its worst: every field the client asks for ending in an entity of another subgraph, keyed by two fields', () => {
    // Each `nK { x }` asked (2 fields) becomes `nK { __typename c d }` (4) in the first fetch.
    const count = (GATEWAY_OPERATION_LIMITS.maxFields - 2) / 2;
    const links = Array.from({ length: count }, (_, index) => `n${index}: U`).join(' ');
    const composed = composeServices([
      { name: 'a', url: 'http://a.invalid', typeDefs: parse(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"]) type Query { t: T } type T { ${links} } type U @key(fields: "c d", resolvable: false) { c: ID! d: ID! }`) },
      { name: 'b', url: 'http://b.invalid', typeDefs: parse(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"]) type U @key(fields: "c d") { c: ID! d: ID! x: Int }`) },
    ]);
    if (composed.errors) throw new Error(composed.errors.map((error) => error.message).join('\n'));
    const planner = createPlanner(composed.supergraphSdl);
    const query = `{ t { __typename ${Array.from({ length: count }, (_, index) => `n${index} { x }`).join(' ')} } }`;
    expect(measureOf(query).fields).toBe(GATEWAY_OPERATION_LIMITS.maxFields);
    const fetches = measured(fetchesOf(planner.queryPlanner.buildQueryPlan(operationFromDocument(planner.apiSchema, parse(query)))));
    const widest = Math.max(...fetches.map((fetch) => fetch.fields));
    // Twice the gateway's limit: past it, within the subgraphs' four times.
    expect(widest).toBe(2 + count * 4);
    expect(widest).toBeGreaterThan(GATEWAY_OPERATION_LIMITS.maxFields);
    expect(fetches.filter((fetch) => exceeds(fetch, SUBGRAPH_OPERATION_LIMITS))).toEqual([]);
  });
});
