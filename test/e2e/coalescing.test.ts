import { describe, expect, it } from 'vitest';
import { DEMO_TOKEN as DASHBOARDS_TOKEN } from '../../emulators/dashboards/data.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { REFERENCE_OPERATIONS } from '../../bench/operations.ts';
import { startTestStack } from '../support/stack.ts';

const { gql, emulator, graphqlUrl } = await startTestStack();
const redemptions20 = REFERENCE_OPERATIONS.find((operation) => operation.name === 'redemptions20')!;

/** Many dashboards asking the same thing at the same moment, while the upstream takes its time. */
async function concurrently(count: number, tokenOf: (index: number) => string) {
  const recognition = emulator('recognition');
  await recognition.fault({ path: '/api/v1/redemptions/*', latencyMs: 300 });
  await recognition.clearRequests();
  try {
    const results = await Promise.all(Array.from({ length: count }, (_, index) => gql(redemptions20.query, { variables: redemptions20.variables, headers: { 'x-recognition-token': tokenOf(index) } })));
    return { results, calls: (await recognition.requests()).filter((request) => !request.path.startsWith('/__emulator')) };
  } finally {
    await recognition.reset();
  }
}

describe('identical reads in flight', () => {
  it('are made once: 32 concurrent identical redemptions20 cost 28 upstream calls in all, every caller gets the whole answer', async () => {
    const { results, calls } = await concurrently(32, () => DEMO_TOKENS.member);
    expect(calls).toHaveLength(28);
    for (const result of results) {
      expect(result.errors).toBeUndefined();
      expect(result).toEqual(results[0]);
    }
    const metrics = await (await fetch(graphqlUrl.replace('/graphql', '/metrics'))).text();
    expect(Number(/^gateway_subgraph_requests_shared_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(31);
  });

  it('are never shared between two credentials', async () => {
    const { calls } = await concurrently(8, (index) => (index % 2 ? DEMO_TOKENS.member : DEMO_TOKENS.admin));
    // One set of 28 per credential: the request log masks the tokens, so the count is the proof.
    expect(calls).toHaveLength(56);
  });

  it('are not joined across a mutation of the same credential: a read sent after it is made again, the earlier one still answers its caller', async () => {
    const dashboards = emulator('dashboards');
    const auth = { 'x-dashboards-token': DASHBOARDS_TOKEN };
    const read = '{ dashboard(slug: "api-health") { id name } }';
    const calls = async () => (await dashboards.requests()).map((request) => `${request.method} ${request.path}`);
    await dashboards.reset();
    // The first read is slow and answers what the service held when it arrived, before the rename.
    await dashboards.fault({ path: '/dashboards/api-health', method: 'GET', status: 200, body: { results: [{ id: 'dsh_0001', name: 'API health', slug: 'api-health' }] }, latencyMs: 1500, times: 1 });
    try {
      const before = gql(read, { headers: auth });
      await expect.poll(calls, { interval: 20 }).toEqual(['GET /dashboards/api-health']);
      const renamed = await gql('mutation { renameDashboard(id: "dsh_0001", name: "Renamed") { name } }', { headers: auth });
      expect(renamed).toEqual({ data: { renameDashboard: { name: 'Renamed' } } });
      const after = await gql(read, { headers: auth });
      expect(after).toEqual({ data: { dashboard: { id: 'dsh_0001', name: 'Renamed' } } });
      expect(await before).toEqual({ data: { dashboard: { id: 'dsh_0001', name: 'API health' } } });
      expect(await calls()).toEqual(['GET /dashboards/api-health', 'PUT /dashboards/dsh_0001', 'GET /dashboards/api-health']);
    } finally {
      await dashboards.reset();
    }
  });
});
