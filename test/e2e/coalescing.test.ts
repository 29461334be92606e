import { describe, expect, it } from 'vitest';
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
});
