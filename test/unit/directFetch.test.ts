import { readFileSync } from 'node:fs';
import { parse, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { directFetch } from '../../gateway/singleFetch.ts';
import { operationFromDocument } from '@apollo/federation-internals';
import { createPlanner } from '../../gateway/planner.ts';

const planner = createPlanner(readFileSync(new URL('../../schema/supergraph.graphql', import.meta.url), 'utf8'));
const decide = (query: string) => directFetch(planner, parse(query), undefined)?.serviceName ?? 'reshaped by Apollo';
/** The selection the subgraph is sent, printed without its operation's header for comparison. */
const sent = (query: string) => {
  const fetch = directFetch(planner, parse(query), undefined);
  return fetch && print(parse(fetch.operation)).replace(/^[^{]*/, '');
};
const printed = (selection: string) => print(parse(selection));

describe('which plans skip the gateway’s reshaping', () => {
  it('takes one fetch that asks the subgraph exactly what the client asked', () => {
    expect(decide('query ($start: Date) { leaderboard(startDate: $start) { count user { id displayName customProperties { name value } } } }')).toBe('recognition');
    expect(decide('{ first: reward(id: "a") { id } second: reward(id: "b") { id } }')).toBe('recognition');
    expect(decide('mutation { createWebhook(input: { url: "https://x.example" }) { id url } }')).toBe('recognition');
  });

  it('takes Apollo Client’s shapes, `__typename` last, and asks the subgraph in the client’s order', () => {
    // The planner moves an unaliased `__typename` first; the answer's keys must follow the client.
    expect(sent('{ rewardCatalog { name __typename rewards { name __typename } } }')).toBe(printed('{ rewardCatalog { name __typename rewards { name __typename } } }'));
    expect(sent('query ($c: String) { rewardCatalog(catalogCountry: $c) { name t: __typename rewards { name __typename } } }')).toBe(
      printed('{ rewardCatalog(catalogCountry: $c) { name t: __typename rewards { name __typename } } }'),
    );
    // Apollo Client adds `__typename` to each fragment too: one key twice, answered where it first appears.
    expect(sent('{ rewardCatalog { name rewards { name ... on CatalogReward { imageUrl __typename } __typename } } }')).toBe(printed('{ rewardCatalog { name rewards { name imageUrl __typename } } }'));
    expect(sent('query Q { rewardCatalog { name ...G __typename } } fragment G on RewardGroup { name __typename }')).toBe(printed('{ rewardCatalog { name __typename } }'));
    expect(sent('mutation { createWebhook(input: { url: "https://x.example" }) { id url __typename } }')).toBe(printed('{ createWebhook(input: {url: "https://x.example"}) { id url __typename } }'));
    // The plan's own text when it already asks in the client's order.
    const query = '{ rewardCatalog { __typename name } }';
    const plan = planner.queryPlanner.buildQueryPlan(operationFromDocument(planner.apiSchema, parse(query)));
    expect(directFetch(planner, parse(query), undefined)?.operation).toBe(plan.node?.kind === 'Fetch' ? plan.node.operation : undefined);
  });

  it('leaves to Apollo an operation that, its fragments written out, would be far longer than the plan’s', () => {
    const spreads = Array.from({ length: 10 }, (_, index) => `c${index}: rewardCatalog { ...F }`).join(' ');
    const long = 'x'.repeat(2000);
    // The plan keeps the fragment: in the client's order already, it is sent as planned.
    expect(decide(`{ ${spreads} } fragment F on RewardGroup { __typename ${long}: name }`)).toBe('recognition');
    expect(decide(`{ ${spreads} } fragment F on RewardGroup { ${long}: name __typename }`)).toBe('reshaped by Apollo');
    expect(decide(`{ ${spreads.replace(/c[1-9]: rewardCatalog \{ \.\.\.F \}/g, '')} } fragment F on RewardGroup { ${long}: name __typename }`)).toBe('recognition');
  });

  it('leaves to Apollo what it must shape: directives, introspection, several subgraphs', () => {
    expect(decide('query ($x: Boolean!) { rewardCatalog @include(if: $x) { name } }')).toBe('reshaped by Apollo');
    expect(decide('{ __typename teapot }')).toBe('reshaped by Apollo');
    expect(decide('{ __schema { types { name } } }')).toBe('reshaped by Apollo');
    expect(decide('{ teapot dashboardStats { quotaRemaining } }')).toBe('reshaped by Apollo');
    expect(decide('{ reward(id: "a") { id } reward(id: "a") { name } }')).toBe('reshaped by Apollo');
    // A key selected twice with different fields below, or fields the planner reorders beyond `__typename`.
    expect(decide('{ rewardCatalog { rewards { name } ... on RewardGroup { rewards { imageUrl } } } }')).toBe('reshaped by Apollo');
    expect(decide('{ rewardCatalog { type ...G } } fragment G on RewardGroup { name __typename }')).toBe('reshaped by Apollo');
  });
});
