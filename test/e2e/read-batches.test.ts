import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { listen } from '../../lib/http.ts';
import { FrameReader, READ_BATCH_HEADER, READ_BATCH_TYPE } from '../../lib/readBatch.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';
import { testLogger } from '../support/logs.ts';

// Identical reads are not shared here, so every read is a read of its own, batched or not.
const { stack, emulator } = await startTestStack({ GATEWAY_DEDUPE_READS: 'off' });
const recognitionUrl = stack.services.find((service) => service.name === 'recognition')!.subgraphUrl!;

interface Seen {
  /** The batch header, when the request carried several reads. */
  batch: string | undefined;
  /** Which demo credential the request carried. */
  credential: 'admin' | 'member' | 'none';
  reads: number;
}

/** Between the gateway and the recognition subgraph: what the gateway sends, passed on as it is. */
const seen: Seen[] = [];
const target = new URL(recognitionUrl);
const recorder = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const values = Object.values(req.headers).join(' ');
    const batch = req.headers[READ_BATCH_HEADER] as string | undefined;
    seen.push({ batch, credential: values.includes(DEMO_TOKENS.admin) ? 'admin' : values.includes(DEMO_TOKENS.member) ? 'member' : 'none', reads: batch ? (JSON.parse(body.toString('utf8')) as unknown[]).length : 1 });
    const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  });
});
const recorded = await listen(recorder, 0);
afterAll(() => recorded.close());

const subgraphUrls = { ...Object.fromEntries(stack.services.map((service) => [service.name, service.subgraphUrl])), recognition: `${recorded.url}${target.pathname}` };
async function gatewayWith(env: Record<string, string>, name: string) {
  const gateway = await startGateway(readGatewayConfig({ GATEWAY_DEDUPE_READS: 'off', ...env }, { port: 0, subgraphUrls }), testLogger(name));
  afterAll(() => gateway.close());
  return gateway;
}
// A window, so that reads sent together are batched together however busy the machine is.
const batching = await gatewayWith({ GATEWAY_BATCH_WINDOW_MS: '50' }, 'gateway-batching');
const alone = await gatewayWith({ GATEWAY_BATCH_READS: 'off' }, 'gateway-alone');

async function ask(url: string, query: string, variables: Record<string, unknown>, token: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-recognition-token': token }, body: JSON.stringify({ query, variables }), ...(signal ? { signal } : {}) });
  return { status: response.status, body: await response.text() };
}

const REWARD = 'query Reward($id: ID!) { reward(id: $id) { id name price } }';
const REWARD_IDS = ['rw_bookshop_25', 'rw_missing', 'rw_bookshop_25', 'rw_nope'];
const API_KEYS = '{ apiKeys { label readOnly } }';

function batches(): Seen[] {
  return seen.filter((request) => request.batch !== undefined);
}

describe('reads of one credential ready at once', () => {
  it('go to the subgraph as one request, each answered byte for byte as it is alone', async () => {
    seen.length = 0;
    const together = await Promise.all(REWARD_IDS.map((id) => ask(batching.graphqlUrl, REWARD, { id }, DEMO_TOKENS.member)));
    const batched = batches();
    expect(batched.length).toBeGreaterThanOrEqual(1);
    expect(batched.reduce((sum, request) => sum + request.reads, 0)).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThan(REWARD_IDS.length);
    seen.length = 0;
    const one = await Promise.all(REWARD_IDS.map((id) => ask(alone.graphqlUrl, REWARD, { id }, DEMO_TOKENS.member)));
    expect(batches()).toEqual([]);
    expect(together).toEqual(one);
    expect(JSON.parse(together[0]!.body)).toMatchObject({ data: { reward: { id: 'rw_bookshop_25' } } });
    // A missing reward is the subgraph's own answer, carried in its frame.
    expect(JSON.parse(together[1]!.body)).toMatchObject({ data: { reward: null } });
    const metrics = await (await fetch(batching.graphqlUrl.replace('/graphql', '/metrics'))).text();
    expect(Number(/^gateway_subgraph_read_batches_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('never carry two credentials: each caller gets the answer for its own', async () => {
    seen.length = 0;
    const tokens = [DEMO_TOKENS.admin, DEMO_TOKENS.member, DEMO_TOKENS.admin, DEMO_TOKENS.member];
    const answers = await Promise.all(tokens.map((token) => ask(batching.graphqlUrl, API_KEYS, {}, token)));
    const [admin, member] = await Promise.all([ask(alone.graphqlUrl, API_KEYS, {}, DEMO_TOKENS.admin), ask(alone.graphqlUrl, API_KEYS, {}, DEMO_TOKENS.member)]);
    expect(admin.body).not.toEqual(member.body);
    answers.forEach((answer, index) => expect(answer.body).toEqual(tokens[index] === DEMO_TOKENS.admin ? admin.body : member.body));
    // Two batches at most, one per credential, each carrying that credential only.
    expect(batches().length).toBeGreaterThanOrEqual(1);
    expect(new Set(seen.filter((request) => request.batch).map((request) => request.credential)).size).toBe(batches().length);
    expect(seen.every((request) => request.credential !== 'none')).toBe(true);
  });

  it('answer a quick read as soon as it is done, not when the slowest read of its batch is', async () => {
    const recognition = emulator('recognition');
    await recognition.fault({ path: '/api/v1/rewards/rw_slow', latencyMs: 1500 });
    try {
      seen.length = 0;
      const slow = ask(batching.graphqlUrl, REWARD, { id: 'rw_slow' }, DEMO_TOKENS.member);
      const quick = await ask(batching.graphqlUrl, REWARD, { id: 'rw_bookshop_25' }, DEMO_TOKENS.member);
      expect(JSON.parse(quick.body)).toMatchObject({ data: { reward: { id: 'rw_bookshop_25' } } });
      // Held back, the quick answer would have come with the slow one: the slow one is still on its way.
      const next = await Promise.race([slow.then(() => 'slow answered too'), new Promise((resolve) => setTimeout(() => resolve('slow still pending'), 300))]);
      expect(next).toBe('slow still pending');
      expect(batches()).toEqual([expect.objectContaining({ reads: 2 })]);
      expect((await slow).status).toBe(200);
    } finally {
      await recognition.reset();
    }
  });

  it('lose nothing when one caller of a batch goes away: the others are answered', async () => {
    const recognition = emulator('recognition');
    await recognition.fault({ path: '/api/v1/rewards/*', latencyMs: 400 });
    try {
      seen.length = 0;
      const leaving = new AbortController();
      const gone = ask(batching.graphqlUrl, REWARD, { id: 'rw_bookshop_25' }, DEMO_TOKENS.member, leaving.signal).catch((error: unknown) => error);
      const staying = ask(batching.graphqlUrl, REWARD, { id: 'rw_bookshop_25' }, DEMO_TOKENS.member);
      setTimeout(() => leaving.abort(), 100);
      expect(await gone).toBeInstanceOf(Error);
      const answer = await staying;
      expect(JSON.parse(answer.body)).toMatchObject({ data: { reward: { id: 'rw_bookshop_25' } } });
      expect(batches()).toEqual([expect.objectContaining({ reads: 2 })]);
    } finally {
      await recognition.reset();
    }
  });
});

describe('a batch posted to a subgraph', () => {
  const post = (body: string, headers: Record<string, string>) =>
    fetch(recognitionUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, ...headers }, body });
  const read = { query: REWARD, variables: { id: 'rw_bookshop_25' } };
  /** A batch's frames by index, read as the gateway reads them. */
  const framesOf = async (response: Response, count: number) => {
    const reader = new FrameReader(count, 1024 * 1024);
    const frames = reader.push(Buffer.from(await response.arrayBuffer()));
    expect(reader.complete).toBe(true);
    return Object.fromEntries(frames.map((frame) => [frame.index, { status: frame.status, headers: frame.headers, body: frame.body.toString('utf8') }]));
  };

  it('runs each read on its own budget, and says what each cost', async () => {
    const response = await post(JSON.stringify([read, read]), { [READ_BATCH_HEADER]: '0,-' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(READ_BATCH_TYPE);
    const frames = await framesOf(response, 2);
    const [refused, answered] = [frames[0]!, frames[1]!];
    expect((JSON.parse(refused.body) as GraphQLResult).errors?.[0]?.extensions?.code).toBe('OPERATION_TOO_EXPENSIVE');
    expect(refused.headers['x-upstream-calls']).toBe('0');
    expect(JSON.parse(answered.body)).toMatchObject({ data: { reward: { id: 'rw_bookshop_25' } } });
    expect(answered.headers['x-upstream-calls']).toBe('1');
  });

  it('refuses a mutation in it with BAD_REQUEST, unrun, and answers the reads beside it', async () => {
    const recognition = emulator('recognition');
    await recognition.clearRequests();
    const mutation = { query: 'mutation { deleteWebhook(id: "wh_001") { success } }' };
    const response = await post(JSON.stringify([mutation, read]), { [READ_BATCH_HEADER]: '-,-' });
    const frames = await framesOf(response, 2);
    expect(frames[0]!.status).toBe(400);
    expect((JSON.parse(frames[0]!.body) as GraphQLResult).errors?.[0]).toMatchObject({ message: expect.stringContaining('a batch of reads carries queries only'), extensions: { code: 'BAD_REQUEST' } });
    expect(frames[1]!.status).toBe(200);
    expect(JSON.parse(frames[1]!.body)).toMatchObject({ data: { reward: { id: 'rw_bookshop_25' } } });
    const calls = (await recognition.requests()).filter((request) => !request.path.startsWith('/__emulator'));
    expect(calls.map((call) => call.method)).toEqual(['GET']);
  });

  it('runs no mutation sent by a persisted query\'s hash, in a batch or alone: the subgraph keeps no operation by hash', async () => {
    const recognition = emulator('recognition');
    await recognition.clearRequests();
    const text = 'mutation { createApiKey(input: { label: "smuggled" }) { success } }';
    const hashed = { extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(text).digest('hex') } } };
    // Registering it runs nothing either: Apollo would have run it once, then kept it by its hash.
    const registered = await post(JSON.stringify({ query: text, ...hashed }), {});
    expect(((await registered.json()) as GraphQLResult).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
    const response = await post(JSON.stringify([hashed, hashed]), { [READ_BATCH_HEADER]: '-,-' });
    const frames = await framesOf(response, 2);
    for (const frame of [frames[0]!, frames[1]!]) expect((JSON.parse(frame.body) as GraphQLResult).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
    const calls = (await recognition.requests()).filter((request) => !request.path.startsWith('/__emulator'));
    expect(calls).toEqual([]);
  });

  it.each([
    ['more reads than a batch may hold', JSON.stringify(Array.from({ length: 65 }, () => read)), Array.from({ length: 65 }, () => '-').join(',')],
    ['a budget count that is not the read count', JSON.stringify([read, read]), '5'],
    ['a budget that is not a number', JSON.stringify([read, read]), '5,x'],
    ['an object instead of an array', JSON.stringify(read), '-'],
    ['an empty array', '[]', ''],
    ['an array of strings', '["a","b"]', '-,-'],
    ['JSON that does not parse', '[{', '-'],
  ])('is refused with 400 BAD_REQUEST for %s', async (_what, body, budgets) => {
    const response = await post(body, { [READ_BATCH_HEADER]: budgets });
    expect(response.status).toBe(400);
    expect(((await response.json()) as GraphQLResult).errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  it('is refused with 413 past the body limit, before it is parsed', async () => {
    const response = await post(`[${'{"query":"{ teapot }"},'.repeat(60_000)}{}]`, { [READ_BATCH_HEADER]: '-' });
    expect(response.status).toBe(413);
  });
});
