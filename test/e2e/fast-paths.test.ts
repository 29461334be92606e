import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../lib/metrics.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { capturedLogs, testLogger } from '../support/logs.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { scrapeMetrics } from '../support/metrics.ts';

/**
 * The fast paths (the gateway's single-fetch shortcut and pass-through, the subgraphs' compiled
 * execution) each beside Apollo's own path: with every switch off, the graph answers every
 * operation with the same status and the same bytes.
 */
const fast = await startTestStack();
const apollo = await startTestStack({ GATEWAY_SINGLE_FETCH: 'off', GATEWAY_PASS_THROUGH: 'off', SUBGRAPH_COMPILED_EXECUTION: 'off' });

async function post(stack: TestStack, body: unknown, headers: Record<string, string> = stack.stack.demoHeaders) {
  const response = await fetch(stack.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

async function passedThrough(stack: TestStack): Promise<number> {
  const text = await scrapeMetrics(`${stack.stack.gateway.url}/metrics`);
  return Number(/^gateway_operations_passed_through_total\{type="query"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

const OPERATIONS: { name: string; body: unknown; headers?: Record<string, string> }[] = [
  { name: 'one subgraph', body: { query: '{ rewardCatalog { name rewards { name } } redemption(id: "rd_001") { state reward { name displayPrice } } }' } },
  { name: 'variables', body: { query: 'query ($slug: String) { dashboard(slug: $slug) { name widgets { totalCount edges { node { title } } } } }', variables: { slug: 'api-health' } } },
  { name: 'several subgraphs', body: { query: '{ teapot dashboardStats { quotaRemaining } labelGroups { id } }' } },
  { name: 'an upstream error beside data', body: { query: '{ teapot redemption(id: "rd_999") { id } }' } },
  { name: 'a bad variable', body: { query: 'query ($id: ID!) { redemption(id: $id) { id } }', variables: { id: { nested: true } } } },
  { name: 'no credential', body: { query: '{ rewardCatalog { name } }' }, headers: {} },
  { name: 'an unknown field', body: { query: '{ rewardCatalog { nope } }' } },
];

describe('fast paths and Apollo’s own path', () => {
  it.each(OPERATIONS)('answer $name alike, first time and repeat', async ({ body, headers }) => {
    for (let round = 0; round < 2; round++) {
      const expected = await post(apollo, body, headers ?? apollo.stack.demoHeaders);
      const actual = await post(fast, body, headers ?? fast.stack.demoHeaders);
      expect(actual).toEqual(expected);
    }
  });

  it('skips Apollo Server on a repeat only when the switches are on', async () => {
    const body = { query: 'query PassThroughProbe { rewardCatalog { name } }' };
    const before = [await passedThrough(fast), await passedThrough(apollo)];
    for (let round = 0; round < 2; round++) {
      await post(fast, body);
      await post(apollo, body);
    }
    expect([(await passedThrough(fast)) - before[0]!, (await passedThrough(apollo)) - before[1]!]).toEqual([1, 0]);
  });
});

describe('a subgraph’s execution switch', () => {
  /**
   * The one difference the spec allows between the two executors shows which one ran: when a
   * non-null root field fails, graphql-js resolves no root field after it, graphql-jit does.
   */
  async function laterRootFieldsResolved(compiledExecution: boolean): Promise<number> {
    let resolved = 0;
    const subgraph = await startSubgraph(
      {
        name: 'probe',
        // It calls no upstream: the budget is never reached.
        maxRequestUpstreamCalls: 1000,
        typeDefs: parse('type Query { failing: String!  later: String }'),
        resolvers: {
          Query: {
            failing: () => {
              throw new Error('no');
            },
            later: () => {
              resolved++;
              return 'x';
            },
          },
        },
        context: () => ({}),
        metrics: createMetrics('probe'),
        logger: testLogger('probe'),
      },
      { port: 0, compiledExecution },
    );
    try {
      const response = await fetch(`${subgraph.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ failing later }' }) });
      expect(((await response.json()) as { data: unknown }).data).toBeNull();
      return resolved;
    } finally {
      await subgraph.close();
    }
  }

  it('runs queries compiled by default and on graphql-js when turned off', async () => {
    expect(await laterRootFieldsResolved(true)).toBe(1);
    expect(await laterRootFieldsResolved(false)).toBe(0);
  });

  it('masks a resolver’s unexpected error alike either way: with its path, and logged', async () => {
    const answers: unknown[] = [];
    for (const compiledExecution of [true, false]) {
      const subgraph = await startSubgraph(
        {
          name: 'probe',
          maxRequestUpstreamCalls: 1000,
          typeDefs: parse('type Query { broken: String  fine: String }'),
          resolvers: {
            Query: {
              broken: () => {
                throw new TypeError(`unexpected while compiled: ${compiledExecution}`);
              },
              fine: () => 'x',
            },
          },
          context: () => ({}),
          metrics: createMetrics('probe'),
          logger: testLogger('probe'),
        },
        { port: 0, compiledExecution },
      );
      try {
        // Twice: the first run and the repeat take different roads.
        for (let round = 0; round < 2; round++) {
          const response = await fetch(`${subgraph.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ broken fine }' }) });
          answers.push(await response.json());
        }
      } finally {
        await subgraph.close();
      }
      // graphql-jit's error once broke Apollo Server's formatting: no path, and nothing logged.
      expect(capturedLogs.some((line) => line.includes(`unexpected while compiled: ${compiledExecution}`) && line.includes('"path":["broken"]'))).toBe(true);
    }
    const masked = { data: { broken: null, fine: 'x' }, errors: [{ message: 'Internal server error', path: ['broken'], locations: [{ line: 1, column: 3 }], extensions: { code: 'INTERNAL_SERVER_ERROR' } }] };
    expect(answers).toEqual([masked, masked, masked, masked]);
  });
});
