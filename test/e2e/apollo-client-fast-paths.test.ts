import { createHash } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache, gql, type DocumentNode } from '@apollo/client/core/index.js';
import { describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { scrapeMetrics } from '../support/metrics.ts';

/**
 * Apollo Client's requests on the fast paths: it appends `__typename` to every selection set (the
 * planner moves it first) and Apollo Client 4 sends `extensions.clientLibrary` with every request.
 * Their repeats must skip Apollo Server, and every answer must be the bytes Apollo's own path gives.
 */
const fast = await startTestStack();
const apollo = await startTestStack({ GATEWAY_SINGLE_FETCH: 'off', GATEWAY_PASS_THROUGH: 'off', SUBGRAPH_COMPILED_EXECUTION: 'off' });

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function passedThrough(stack: TestStack): Promise<number> {
  const text = await scrapeMetrics(`${stack.stack.gateway.url}/metrics`);
  return Number(/^gateway_operations_passed_through_total\{type="query"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

/** The recognition emulator's calls, in an order that does not depend on which of two parallel calls came first. */
async function upstreamCalls(stack: TestStack): Promise<string[]> {
  return (await stack.emulator('recognition').requests()).map((request) => `${request.method} ${request.path} ${JSON.stringify(request.query)}`).sort();
}

/** Apollo Client (its HttpLink, its cache's `__typename`s) over a stack, every raw answer kept. */
function apolloClientOver(stack: TestStack) {
  const answers: Answer[] = [];
  const bodies: unknown[] = [];
  const client = new ApolloClient({
    link: new HttpLink({
      uri: stack.graphqlUrl,
      headers: stack.stack.demoHeaders,
      fetch: async (input, init) => {
        bodies.push(JSON.parse(String(init?.body)));
        const response = await fetch(input, init);
        const text = await response.text();
        answers.push({ status: response.status, contentType: response.headers.get('content-type'), text });
        return new Response(text, { status: response.status, headers: response.headers });
      },
    }),
    cache: new InMemoryCache(),
  });
  return { client, answers, bodies };
}

async function post(stack: TestStack, body: unknown): Promise<Answer> {
  const response = await fetch(stack.graphqlUrl, {
    method: 'POST',
    // Apollo Client 4's own headers.
    headers: { accept: 'application/graphql-response+json,application/json;q=0.9', 'content-type': 'application/json', ...stack.stack.demoHeaders },
    body: JSON.stringify(body),
  });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

const OPERATIONS: { name: string; query: DocumentNode; variables?: Record<string, unknown> }[] = [
  { name: 'nested objects', query: gql`query Catalog { rewardCatalog { name rewards { name minimumDisplayPrice } } }` },
  { name: 'variables and an aliased __typename', query: gql`query Redemption($id: ID!) { redemption(id: $id) { state kind: __typename reward { name displayPrice } } }`, variables: { id: 'rd_001' } },
  {
    name: 'fragments, each given its own __typename',
    query: gql`
      query Grouped { rewardCatalog { ...Group } }
      fragment Group on RewardGroup { name rewards { ... on CatalogReward { name imageUrl } } }
    `,
  },
  { name: 'a list of users', query: gql`query Board { leaderboard { count user { displayName username } } }` },
];

/** Apollo Client 4.3.8's exact request bodies, `extensions.clientLibrary` included. */
const CLIENT_LIBRARY = { clientLibrary: { name: '@apollo/client', version: '4.3.8' } };
const APOLLO_CLIENT_4_QUERY =
  'query PT($c: String) {\n  rewardCatalog(catalogCountry: $c) {\n    name\n    t: __typename\n    rewards {\n      name\n      ... on CatalogReward {\n        imageUrl\n        __typename\n      }\n      __typename\n    }\n  }\n}';

describe('Apollo Client on the fast paths', () => {
  it.each(OPERATIONS)('answers $name as Apollo’s own path does, and passes the repeat through', async ({ query, variables }) => {
    const onFast = apolloClientOver(fast);
    const onApollo = apolloClientOver(apollo);
    await fast.emulator('recognition').clearRequests();
    await apollo.emulator('recognition').clearRequests();
    const before = [await passedThrough(fast), await passedThrough(apollo)];
    for (let round = 0; round < 2; round++) {
      const expected = await onApollo.client.query({ query, variables: variables ?? {}, fetchPolicy: 'no-cache' });
      const actual = await onFast.client.query({ query, variables: variables ?? {}, fetchPolicy: 'no-cache' });
      expect(actual.data).toEqual(expected.data);
    }
    // The request is Apollo Client's shape: `__typename` last in a selection set.
    expect((onFast.bodies[0] as { query: string }).query).toMatch(/\s__typename\s+}/);
    expect(onFast.answers).toEqual(onApollo.answers);
    expect(JSON.parse(onFast.answers[0]!.text).errors).toBeUndefined();
    expect(onFast.answers[0]!.text).toContain('"__typename":');
    expect([(await passedThrough(fast)) - before[0]!, (await passedThrough(apollo)) - before[1]!]).toEqual([1, 0]);
    expect(await upstreamCalls(fast)).toEqual(await upstreamCalls(apollo));
  });

  it('passes through Apollo Client 4’s requests, `extensions.clientLibrary` and all', async () => {
    const body = { operationName: 'PT', variables: { c: 'US' }, extensions: CLIENT_LIBRARY, query: APOLLO_CLIENT_4_QUERY };
    const before = await passedThrough(fast);
    for (let round = 0; round < 2; round++) expect(await post(fast, body)).toEqual(await post(apollo, body));
    const answer = JSON.parse((await post(fast, body)).text) as { data: { rewardCatalog: Record<string, unknown>[] } };
    expect(Object.keys(answer.data.rewardCatalog[0]!)).toEqual(['name', 't', 'rewards']);
    expect(Object.keys((answer.data.rewardCatalog[0]!.rewards as Record<string, unknown>[])[0]!)).toEqual(['name', 'imageUrl', '__typename']);
    expect((await passedThrough(fast)) - before).toBe(2);
  });

  it('passes through the hits of its automatic persisted queries', async () => {
    const query = 'query PQ {\n  rewardCatalog {\n    name\n    __typename\n  }\n}';
    const byHash = { operationName: 'PQ', variables: {}, extensions: { ...CLIENT_LIBRARY, persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } } };
    const before = await passedThrough(fast);
    const unknown = [await post(fast, byHash), await post(apollo, byHash)];
    expect(unknown[0]).toEqual(unknown[1]);
    expect(JSON.parse(unknown[0]!.text).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const registering = { ...byHash, query };
    expect(await post(fast, registering)).toEqual(await post(apollo, registering));
    for (let round = 0; round < 2; round++) expect(await post(fast, byHash)).toEqual(await post(apollo, byHash));
    expect((await passedThrough(fast)) - before).toBe(2);
  });

  it('keeps any other extension on Apollo Server’s path', async () => {
    const body = { query: '{ rewardCatalog { name __typename } }', extensions: { ...CLIENT_LIBRARY, somethingElse: true } };
    const before = await passedThrough(fast);
    for (let round = 0; round < 2; round++) expect(await post(fast, body)).toEqual(await post(apollo, body));
    expect((await passedThrough(fast)) - before).toBe(0);
  });
});
