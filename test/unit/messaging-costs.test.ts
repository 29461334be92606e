import { readFileSync } from 'node:fs';
import { getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDemandControl, readCostTable } from '../../gateway/demandControl.ts';
import { createPlanner } from '../../gateway/planner.ts';

/**
 * QA pass 14, finding 2: the messaging fields declared no costs, so the gateway estimated a store's
 * subscribers nested under each subscriber's store at one call. Estimates here are read from the
 * composed supergraph, as the gateway reads them, against the default budget.
 */
const supergraph = readFileSync(new URL('../../schema/supergraph.graphql', import.meta.url), 'utf8');
const demand = createDemandControl({ schema: createPlanner(supergraph).graphqlApiSchema, costs: readCostTable(supergraph) });
const BUDGET = 1000;
const STORE = '5a1f0c9e8b3d4e0012a7d001';
const estimate = (query: string, variables?: Record<string, unknown>) => {
  const document = parse(query);
  return demand.estimate(document, getOperationAST(document)!, variables).calls;
};

describe('messaging: the estimate of an operation', () => {
  it("puts the report's nested operation far over the budget", () => {
    const fanout = `{ store(id: "${STORE}") { subscribers(first: 100) { edges { node { store { subscribers(first: 100) {
      edges { node { store { subscribers(first: 100) { totalCount } } } } } } } } } } }`;
    expect(estimate(fanout)).toBeGreaterThan(BUDGET);
    // The store, up to two pages for an unaligned window, then a store and its pages per subscriber.
    expect(estimate(fanout)).toBe(1 + 2 + 100 * (1 + 2 + 100 * (1 + 2)));
  });

  it('charges a page of subscribers up to two calls, and what each subscriber selects by `first`', () => {
    expect(estimate(`{ store(id: "${STORE}") { subscribers(first: 100) { totalCount } } }`)).toBe(1 + 2);
    expect(estimate(`query($n: Int) { store(id: "${STORE}") { subscribers(first: $n) { edges { node { store { name } } } } } }`, { n: 10 })).toBe(1 + 2 + 10);
    // No `first`: the service's page of 100.
    expect(estimate(`{ store(id: "${STORE}") { subscribers { edges { node { store { name } } } } } }`)).toBe(1 + 2 + 100);
  });

  it("charges the store of each opt-in of a number, and of each store of an account its subscribers' pages", () => {
    expect(estimate('{ mobileNumber(mobileId: "15550000001") { optIns { storeName } } }')).toBe(1);
    expect(estimate('{ mobileNumber(mobileId: "15550000001") { optIns { store { name } } } }')).toBeGreaterThan(1);
    expect(estimate('{ account(id: "a") { stores { name keywords { keyword } } users { email } } }')).toBe(1);
    expect(estimate('{ account(id: "a") { stores { subscribers(first: 1) { totalCount } } } }')).toBeGreaterThan(1);
  });

  it("charges an event's store and subscriber, each read once per event", () => {
    expect(estimate(`subscription { inboundMessageReceived(filter: { storeId: "${STORE}" }) { from body } }`)).toBe(1);
    expect(estimate(`subscription { inboundMessageReceived(filter: { storeId: "${STORE}" }) { store { name } subscriber { shortCode } } }`)).toBe(3);
    expect(estimate(`subscription { subscriberStatusChanged(filter: { storeId: "${STORE}" }) { store { name } subscriber { shortCode } } }`)).toBe(3);
  });

  it('keeps every documented example under the budget', () => {
    const examples = [
      `{
        store(id: "${STORE}") {
          name inboundCallbackUrl templates { confirmation }
          keywords { keyword type responderContent }
          subscribers(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { node { mobileId status } } }
        }
        account(id: "5a1f0c9e8b3d4e0012a7c001") { name stores { name automation { confirmation alreadyOptedIn } } users { email } }
      }`,
      `{
        subscriber(storeId: "${STORE}", mobileId: "+1 555 000 0001") { status shortCode optInAttempts store { name } }
        mobileNumber(mobileId: "15550000001") { optIns { storeName status store { name } } }
      }`,
      `{ store(id: "${STORE}") { subscribers(first: 100) { edges { node { mobileId store { name } } } } } }`,
      `mutation { sendOptIn(input: { storeId: "${STORE}", mobileId: "+15556660001", type: DOUBLE }) { messageId } }`,
      `mutation {
        setResponderContent(input: { storeId: "${STORE}", keywordId: "k", content: "Open 6am-8pm" }) { content }
        setAutomation(storeId: "${STORE}", automation: ALREADY_OPTED_IN, enabled: false) { enabled }
      }`,
      `subscription { subscriberStatusChanged(filter: { storeId: "${STORE}" }) { succeeded reason mobileId subscriberStatus subscriber { shortCode } } }`,
    ];
    for (const example of examples) expect(estimate(example), example).toBeLessThanOrEqual(BUDGET);
  });
});
