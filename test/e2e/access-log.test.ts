import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { capturedLogs } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';
import { overSse, overWs } from '../support/transports.ts';

const { gql, graphqlUrl } = await startTestStack();

interface AccessLine {
  msg: string;
  component?: string;
  type: string;
  operation?: string;
  documentHash?: string;
  status: number;
  errorCodes: string[];
  upstreamCalls?: number;
  caller?: string;
  path: string;
}
const accessLines = () =>
  capturedLogs
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.includes('"msg":"operation"'))
    .map((line) => JSON.parse(line) as AccessLine);

describe('the access log', () => {
  it('writes one line per operation on both paths, with its hash, status, codes, upstream calls and a caller hash', async () => {
    const query = 'query OneReward($id: ID!) { reward(id: $id) { name } }';
    const headers = { 'x-recognition-token': DEMO_TOKENS.member };
    const before = accessLines().length;
    for (let round = 0; round < 3; round += 1) await gql(query, { variables: { id: 'rw_amazon_25' }, headers });
    await gql('{ redemption(id: "rd_001") { id } }', {});

    const lines = accessLines().slice(before);
    expect(lines).toHaveLength(4);
    const hash = createHash('sha256').update(query).digest('hex');
    expect(lines.slice(0, 3)).toEqual(
      Array.from({ length: 3 }, () => expect.objectContaining({ component: 'access', type: 'query', operation: 'OneReward', documentHash: hash, status: 200, errorCodes: [], upstreamCalls: 1, caller: expect.stringMatching(/^c:/) })),
    );
    expect(lines.map((line) => line.path)).toContain('pass-through');
    // No credential sent: one UNAUTHENTICATED error, no upstream call, no caller.
    expect(lines[3]).toMatchObject({ errorCodes: ['UNAUTHENTICATED'], upstreamCalls: 0 });
    expect(lines[3]!.caller).toBeUndefined();
    expect(JSON.stringify(lines)).not.toContain(DEMO_TOKENS.member);
    expect(JSON.stringify(lines)).not.toContain('rw_amazon_25');
  });

  it('logs a query over graphql-ws and SSE under the hash of the text the client sent, as over HTTP', async () => {
    // Not as graphql-js would print it: Apollo Server is handed the client's own text, so its hash and its error locations are the client's.
    const query = '\n  query   Trends {\n\thashtagTrends { hashtag }\n}\n';
    const headers = { 'x-recognition-token': DEMO_TOKENS.member };
    const before = accessLines().length;
    expect((await overWs(graphqlUrl, { query }, headers)).body?.errors).toBeUndefined();
    expect((await overSse(graphqlUrl, { query }, headers)).body?.errors).toBeUndefined();
    const hash = createHash('sha256').update(query).digest('hex');
    expect(accessLines().slice(before)).toEqual([expect.objectContaining({ operation: 'Trends', documentHash: hash }), expect.objectContaining({ operation: 'Trends', documentHash: hash })]);
  });

  it('keeps only the start of a long operation name', async () => {
    const before = accessLines().length;
    const name = `Q${'x'.repeat(5000)}`;
    await gql(`query ${name} { redemption(id: "rd_001") { id } }`, { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    const [line] = accessLines().slice(before);
    expect(line!.operation!.length).toBeLessThanOrEqual(101);
    expect(name.startsWith(line!.operation!.slice(0, 100))).toBe(true);
  });
});
