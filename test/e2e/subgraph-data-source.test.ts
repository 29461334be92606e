import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway, type StartedGateway } from '../../gateway/server.ts';
import { listen, type Started } from '../../lib/http.ts';
import { testLogger } from '../support/logs.ts';

/** What the stand-in subgraph answers next, and what it was sent. */
let answer: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '{"data":{"webhooks":[]}}' };
const received: { headers: http.IncomingHttpHeaders; body: unknown }[] = [];

let subgraph: Started;
let gateway: StartedGateway;

beforeAll(async () => {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  subgraph = await listen(server, 0);
  gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: `${subgraph.url}/graphql` } }), testLogger('data-source'));
});
afterAll(async () => {
  await gateway.close();
  await subgraph.close();
});

async function query(text: string, variables?: Record<string, unknown>) {
  const response = await fetch(gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, 'x-dashboards-token': 'dashboards-secret-0f9e8d7c' },
    body: JSON.stringify({ query: text, variables }),
  });
  return { status: response.status, headers: response.headers, result: (await response.json()) as { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] } };
}

describe('the gateway calling a subgraph', () => {
  it('posts the operation as JSON with only that service’s credential', async () => {
    answer = { status: 200, body: '{"data":{"webhooks":[{"id":"wh_1","url":"https://example.test/hook"}]}}' };
    received.length = 0;
    const { result } = await query('{ webhooks { id url } }');
    expect(result).toEqual({ data: { webhooks: [{ id: 'wh_1', url: 'https://example.test/hook' }] } });
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(received[0]!.headers['x-recognition-token']).toBe(DEMO_TOKENS.member);
    expect(received[0]!.headers['x-dashboards-token']).toBeUndefined();
    expect(received[0]!.body).toMatchObject({ query: expect.stringContaining('webhooks') });
  });

  it('keeps the subgraph’s typed errors when it refuses with a non-2xx status', async () => {
    answer = { status: 400, body: '{"errors":[{"message":"ids: at most 100","extensions":{"code":"BAD_USER_INPUT","argument":"ids"}}]}' };
    const { result } = await query('{ webhooks { id } }');
    expect(result.errors?.[0]).toMatchObject({ message: 'ids: at most 100', extensions: { code: 'BAD_USER_INPUT', argument: 'ids' } });
  });

  it('reports a non-2xx answer without GraphQL errors, or a body that is not GraphQL, as UPSTREAM_ERROR', async () => {
    answer = { status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } };
    const failed = await query('{ webhooks { id } }');
    expect(failed.result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 502 });

    answer = { status: 200, body: 'maintenance', headers: { 'content-type': 'text/plain' } };
    const garbled = await query('{ webhooks { id } }');
    expect(garbled.result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 200 });
  });

  it('carries the subgraph’s cache policy into the gateway’s answer', async () => {
    answer = { status: 200, body: '{"data":{"webhooks":[]}}', headers: { 'cache-control': 'max-age=60, private' } };
    const cached = await query('{ webhooks { id } }');
    expect(cached.headers.get('cache-control')).toBe('max-age=60, private');

    answer = { status: 200, body: '{"data":{"webhooks":[]}}' };
    const uncached = await query('{ webhooks { id } }');
    expect(uncached.headers.get('cache-control')).not.toMatch(/max-age=[1-9]/);
  });
});
