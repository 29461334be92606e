import { readFileSync } from 'node:fs';
import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createPlanner } from '../../gateway/planner.ts';
import { refuseConditionalSubscriptionRoot } from '../../gateway/plainHttpSubscriptions.ts';
import { createOperationPreparer } from '../../gateway/subscriptions/prepare.ts';
import type { SubscriptionPlan } from '../../gateway/subscriptions/planning.ts';

/** QA pass 9, items 2, 3, 5 and 6: how a subscription's root is read before it is planned and streamed. */
const planner = createPlanner(readFileSync(new URL('../../schema/supergraph.graphql', import.meta.url), 'utf8'));
const plan = (query: string, operationName?: string) => {
  const planned = planner.plan(parse(query), operationName);
  if (Array.isArray(planned)) throw new Error(`not planned: ${planned.map((error) => error.message).join('; ')}`);
  return planned as SubscriptionPlan;
};

describe('planning a subscription', () => {
  it('makes a root field inside fragments, named or inline, resumable exactly as a plain one', () => {
    const plain = plan('subscription { bonusCreated { id cursor } }');
    expect(plain).toMatchObject({ resumable: true, rootField: 'bonusCreated', cursorAlias: 'gatewayResumeCursor' });
    for (const query of [
      'subscription { ...F } fragment F on Subscription { bonusCreated { id cursor } }',
      'subscription { ... on Subscription { bonusCreated { id cursor } } }',
      'subscription { ... { ...F } } fragment F on Subscription { ...G } fragment G on Subscription { bonusCreated { id cursor } }',
      // One root field selected in two places is one field.
      'subscription { bonusCreated { id } ...F } fragment F on Subscription { bonusCreated { cursor } }',
    ]) {
      const fragmented = plan(query);
      expect(fragmented, query).toMatchObject({ resumable: true, rootField: 'bonusCreated', cursorAlias: 'gatewayResumeCursor' });
      expect(fragmented.primary.operation, query).toContain('bonusCreated(after:$gatewayResumeAfter)');
      expect(fragmented.primary.variableUsages, query).toEqual(['gatewayResumeAfter']);
    }
  });

  it('keeps a fragment the root field itself spreads, and the client’s `after` where it sits', () => {
    const planned = plan('subscription Feed($after: String) { ...Root } fragment Root on Subscription { feed: bonusCreated(after: $after) { ...Event } } fragment Event on BonusEvent { id cursor }');
    expect(planned).toMatchObject({ rootField: 'feed', clientAfter: { variable: 'after', alsoElsewhere: false } });
    expect(planned.text).toContain('fragment Event on BonusEvent');
    expect(planned.text).not.toContain('fragment Root');
    // With its variable gone once the gateway's took its place, the text is that of the same operation written without `after`.
    expect(planned.text).toBe(plan('subscription Feed { feed: bonusCreated { ...Event } } fragment Event on BonusEvent { id cursor }').text);
  });

  it('picks a cursor alias no name of the client’s document takes', () => {
    expect(plan('subscription { bonusCreated { id gatewayResumeCursor: id } }').cursorAlias).toBe('gatewayResumeCursor1');
    expect(plan('subscription { bonusCreated { gatewayResumeCursor: id gatewayResumeCursor1: cursor } }').cursorAlias).toBe('gatewayResumeCursor2');
  });

  it('still refuses the reserved variable and conditions at the root, in words', () => {
    for (const [query, message] of [
      ['subscription ($gatewayResumeAfter: String) { bonusCreated { id } }', '$gatewayResumeAfter is reserved by the gateway'],
      ['subscription ($s: Boolean!) { bonusCreated @include(if: $s) { id } }', 'Anonymous Subscription must not use `@skip` or `@include` directives in the top level selection.'],
    ] as const) {
      expect(planner.plan(parse(query), undefined)).toEqual([expect.objectContaining({ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })]);
    }
  });
});

describe('@skip and @include at a subscription’s root', () => {
  const schema = buildSchema('type Query { hello: String } type Subscription { tick(every: Int): Int }');

  it('are a validation error of the streaming transports’ preparer, never a throw', () => {
    const prepare = createOperationPreparer({ schema });
    for (const query of [
      'subscription ($s: Boolean!) { tick @include(if: $s) }',
      'subscription ($s: Boolean!) { ...F @skip(if: $s) } fragment F on Subscription { tick }',
      'subscription ($s: Boolean!) { ... on Subscription { ... @include(if: $s) { tick } } }',
    ]) {
      expect(prepare({ query, variables: { s: true } }), query).toEqual({
        errors: [expect.objectContaining({ message: 'Anonymous Subscription must not use `@skip` or `@include` directives in the top level selection.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })],
      });
    }
    // Below the root field, and in queries, they stay the client's to use.
    expect(prepare({ query: 'query ($s: Boolean!) { hello @include(if: $s) }', variables: { s: true } })).toHaveProperty('document');
    // graphql-js's own rule still runs: two root fields are its refusal.
    expect(prepare({ query: 'subscription Two { tick again: tick }' })).toEqual({ errors: [expect.objectContaining({ message: 'Subscription "Two" must select only one top level field.' })] });
  });

  it('are refused before Apollo Server over plain HTTP, parsing only a text that names both', () => {
    const url = new URL('http://gateway/graphql');
    const refusal = { refusal: { status: 400, headers: {}, error: { message: 'Subscription "Feed" must not use `@skip` or `@include` directives in the top level selection.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } } } };
    const query = 'subscription Feed($s: Boolean!) { bonusCreated @include(if: $s) { id } }';
    expect(refuseConditionalSubscriptionRoot({ method: 'POST', body: { query, variables: { s: true } }, url })).toEqual(refusal);
    const search = new URL(url);
    search.searchParams.set('query', query);
    expect(refuseConditionalSubscriptionRoot({ method: 'GET', body: undefined, url: search })).toEqual(refusal);
    for (const body of [
      { query: 'subscription { bonusCreated { id @include(if: true) } }' },
      { query: 'query ($s: Boolean!) { rewardCatalog @include(if: $s) { name } }' },
      { query: 'subscription ($s: Boolean!) { bonusCreated @include(if: $s) { id' },
      { query: 'query A { hello } subscription B($s: Boolean!) { tick @skip(if: $s) }', operationName: 'A' },
      { query: 42 },
      null,
    ]) {
      expect(refuseConditionalSubscriptionRoot({ method: 'POST', body, url }), JSON.stringify(body)).toBeUndefined();
    }
  });
});
