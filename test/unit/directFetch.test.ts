import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { directFetch } from '../../gateway/singleFetch.ts';
import { createPlanner } from '../../gateway/planner.ts';

const planner = createPlanner(readFileSync(new URL('../../schema/supergraph.graphql', import.meta.url), 'utf8'));
const decide = (query: string) => directFetch(planner, parse(query), undefined)?.serviceName ?? 'reshaped by Apollo';

describe('which plans skip the gateway’s reshaping', () => {
  it('takes one fetch that asks the subgraph exactly what the client asked', () => {
    expect(decide('query ($start: Date) { leaderboard(startDate: $start) { count user { id displayName customProperties { name value } } } }')).toBe('recognition');
    expect(decide('{ first: reward(id: "a") { id } second: reward(id: "b") { id } }')).toBe('recognition');
    expect(decide('mutation { createWebhook(input: { url: "https://x.example" }) { id url } }')).toBe('recognition');
  });

  it('leaves to Apollo what it must shape: directives, introspection, several subgraphs', () => {
    expect(decide('query ($x: Boolean!) { rewardCatalog @include(if: $x) { name } }')).toBe('reshaped by Apollo');
    expect(decide('{ __typename teapot }')).toBe('reshaped by Apollo');
    expect(decide('{ __schema { types { name } } }')).toBe('reshaped by Apollo');
    expect(decide('{ teapot dashboardStats { quotaRemaining } }')).toBe('reshaped by Apollo');
    expect(decide('{ reward(id: "a") { id } reward(id: "a") { name } }')).toBe('reshaped by Apollo');
  });
});
