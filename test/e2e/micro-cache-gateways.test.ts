import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { launch, type Child } from '../../bench/processes.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { SERVICE_ENTRY, SERVICES } from '../../lib/services.ts';
import { DROPS_CHANNEL } from '../../gateway/microCacheChannel.ts';
import { requireBinary } from '../support/binaries.ts';
import { capturedLogs } from '../support/logs.ts';
import { startRecognitionEmulator, startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { redisAnswers, startRedis } from '../support/redisServer.ts';
import { startTcpRelay, type TcpRelay } from '../support/tcpRelay.ts';
import { waitUntil } from '../support/waitFor.ts';

/**
 * QA7 defect 6: the micro-cache and the write fence were per gateway, so after a mutation through
 * gateway A, gateway B (same REDIS_URL) answered the old list for the whole time to live. Two
 * gateway processes here share one recognition subgraph and one redis-server: a credential's
 * mutation through either makes the other forget what it kept for that credential of that
 * subgraph before the mutation is answered, and nothing else; a Redis that goes away, or stops
 * answering, turns the micro-cache off until it is back; a hostile message changes nothing.
 * Gateway B reaches Redis through a relay that can hold back what Redis sends it.
 */
const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const KEYS = '{ apiKeys { id label } }';
const CATALOG = '{ rewardCatalog { name } }';
const createKey = (label: string) => `mutation { createApiKey(input: { label: "${label}" }) { success label } }`;

type Result = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
async function gql(gateway: Pick<Child, 'url'>, query: string, headers: Record<string, string> = admin): Promise<Result> {
  const response = await fetch(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });
  return (await response.json()) as Result;
}
const labelsOf = (result: Result) => ((result.data?.apiKeys ?? []) as { label: string }[]).map((key) => key.label);

/** A redis-server on a given port (the one the gateways were given), so it can come back where it was. */
async function startRedisOn(port: number): Promise<{ close(): Promise<void> }> {
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await redisAnswers(`redis://127.0.0.1:${port}`);
  return { close: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')))) };
}

describe.skipIf(!requireBinary('redis-server'))('the micro-cache across gateways on one Redis (GATEWAY_MICRO_CACHE with REDIS_URL)', () => {
  const children: Child[] = [];
  let redis: { url: string; close(): Promise<void> };
  let emulator: Awaited<ReturnType<typeof startRecognitionEmulator>>;
  let subgraph: Awaited<ReturnType<typeof startRecognitionSubgraph>>;
  let a: Child;
  let b: Child;
  let lagging: TcpRelay;
  /** A client of the same Redis, listening on the gateways' channel as anyone with access could. */
  let listener: Redis;
  const messages: string[] = [];

  const upstream = async () => (await emulator.control.requests()).filter((request) => !request.path.startsWith('/__emulator')).map((request) => `${request.method} ${request.path}`);
  /** Whether `gateway` answers a read of `query` it just made from what it kept (no upstream call the second time). */
  async function keeps(gateway: Pick<Child, 'url'>, query: string, headers = admin): Promise<boolean> {
    await gql(gateway, query, headers);
    await emulator.control.clearRequests();
    await gql(gateway, query, headers);
    return (await upstream()).length === 0;
  }

  async function startGatewayProcess(name: string, redisUrl: string): Promise<Child> {
    let partial = '';
    const onOutput = (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) capturedLogs.push(`${line}\n`);
    };
    // Services this test does not run answer nothing; the gateways never call them here.
    const subgraphUrls = Object.fromEntries(SERVICES.map((service) => [service.env.subgraphUrl, 'http://127.0.0.1:9/graphql']));
    const env = {
      ...subgraphUrls,
      [SERVICE_ENTRY.recognition.env.subgraphUrl]: subgraph.graphqlUrl,
      GATEWAY_PORT: '0',
      GATEWAY_MICRO_CACHE: 'Query.apiKeys:60000,Query.rewardCatalog:60000',
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'info',
    };
    const child = await launch({ name, entry: 'gateway/main.ts', env, readyTimeoutMs: 60_000, onOutput });
    children.push(child);
    return child;
  }

  beforeAll(async () => {
    redis = await startRedis();
    emulator = await startRecognitionEmulator();
    subgraph = await startRecognitionSubgraph(emulator.url, {});
    lagging = await startTcpRelay(redis.url);
    [a, b] = await Promise.all([startGatewayProcess('gateway-a', redis.url), startGatewayProcess('gateway-b', lagging.url)]);
    listener = new Redis(redis.url, { maxRetriesPerRequest: null });
    listener.on('error', () => undefined);
    listener.on('message', (_channel: string, message: string) => messages.push(message));
    await listener.subscribe(DROPS_CHANNEL);
  }, 120_000);

  afterAll(async () => {
    listener?.disconnect();
    for (const child of children) await child.kill('SIGKILL');
    await subgraph?.close();
    await emulator?.close();
    await lagging?.close();
    await redis?.close();
  });

  beforeEach(async () => {
    // Each test starts with both gateways keeping reads (their channel up), whatever the last did.
    await waitUntil(async () => (await keeps(a, KEYS)) && (await keeps(b, KEYS)), () => 'both gateways keeping reads', 15_000);
  });

  it('makes the other gateway forget what the writing credential kept of the subgraph before the mutation is answered, and only that', async () => {
    await gql(b, CATALOG, member);
    await emulator.control.clearRequests();
    // Both gateways answer from what they kept.
    expect(labelsOf(await gql(a, KEYS))).not.toContain('through-a');
    expect(labelsOf(await gql(b, KEYS))).not.toContain('through-a');
    await gql(b, CATALOG, member);
    expect(await upstream()).toEqual([]);

    expect((await gql(a, createKey('through-a'))).data?.createApiKey).toMatchObject({ success: true, label: 'through-a' });
    // Sent once the answer came: B holds nothing of the admin's any more, so it asks the service.
    expect(labelsOf(await gql(b, KEYS))).toContain('through-a');
    expect(await upstream()).toEqual(['POST /api/v1/api_keys', 'GET /api/v1/api_keys']);
    // The fresh answer is kept again; another credential's entry was never dropped.
    await gql(b, KEYS);
    await gql(b, CATALOG, member);
    expect(await upstream()).toEqual(['POST /api/v1/api_keys', 'GET /api/v1/api_keys']);
    // The channel names a digest of the credential, never the credential.
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message).not.toContain(DEMO_TOKENS.admin);
  });

  it('has a read sent after the answer through the other gateway see the write, round after round, either way', async () => {
    let stale = 0;
    for (let round = 0; round < 20; round += 1) {
      const [writer, reader] = round % 2 === 0 ? [a, b] : [b, a];
      // The reader keeps the list first, so only the channel can tell it of the write.
      await gql(reader, KEYS);
      await gql(writer, createKey(`round-${round}`));
      if (!labelsOf(await gql(reader, KEYS)).includes(`round-${round}`)) stale += 1;
    }
    expect(stale).toBe(0);
  });

  it('has a read sent after the answer see the write however late Redis\'s copy of the drop reaches the other gateway', async () => {
    await gql(b, KEYS);
    lagging.lagMs = 300;
    try {
      await emulator.control.clearRequests();
      await gql(a, createKey('while-b-lags'));
      // The drop reaches B some 300 ms after A answered; B hears it before answering from what it kept.
      expect(labelsOf(await gql(b, KEYS))).toContain('while-b-lags');
      expect(await upstream()).toEqual(['POST /api/v1/api_keys', 'GET /api/v1/api_keys']);
    } finally {
      lagging.lagMs = 0;
    }
  });

  it('never keeps a read that was on its way through the other gateway when the credential wrote', async () => {
    // A read neither gateway has kept yet; the service takes a second over it.
    const ids = '{ apiKeys { id } }';
    await emulator.control.clearRequests();
    await emulator.control.fault({ path: '/api/v1/api_keys', method: 'GET', latencyMs: 1000, times: 1 });
    const before = gql(b, ids);
    await expect.poll(upstream, { interval: 20 }).toEqual(['GET /api/v1/api_keys']);
    await gql(a, createKey('while-b-reads'));
    expect((await before).errors).toBeUndefined();
    // Asked again through B, as it may predate the write; that answer is kept.
    await gql(b, ids);
    await gql(b, ids);
    expect(await upstream()).toEqual(['GET /api/v1/api_keys', 'POST /api/v1/api_keys', 'GET /api/v1/api_keys']);
  });

  it('tells of a burst of mutations in no more messages than mutations, and the other gateway then sees all of them', async () => {
    messages.length = 0;
    const labels = Array.from({ length: 40 }, (_, index) => `burst-${index}`);
    const answers = await Promise.all(labels.map((label) => gql(a, createKey(label))));
    for (const answer of answers) expect(answer.errors).toBeUndefined();
    const seen = labelsOf(await gql(b, KEYS));
    for (const label of labels) expect(seen).toContain(label);
    await waitUntil(() => messages.length > 0, () => 'the burst on the channel');
    expect(messages.length).toBeLessThanOrEqual(labels.length);
  });

  it('ignores what is not a message of theirs on the channel, and stays up', async () => {
    await gql(b, KEYS);
    const hostile = [
      'not json',
      '{}',
      'null',
      '[]',
      JSON.stringify({ v: 1, from: 'x', drops: 'everything' }),
      JSON.stringify({ v: 1, from: 'x', drops: [[1, 2]] }),
      JSON.stringify({ v: 1, from: 'x', drops: [['recognition', DEMO_TOKENS.admin]] }),
      JSON.stringify({ v: 1, from: 'x', all: 'yes' }),
      JSON.stringify({ v: 1, from: 'x', drops: Array.from({ length: 100_000 }, () => ['recognition', 'A'.repeat(43)]) }),
      '{"__proto__":{"all":true},"constructor":{"prototype":{"all":true}},"v":1,"from":"x"}',
      'x'.repeat(2 * 1024 * 1024),
    ];
    const publisher = new Redis(redis.url);
    try {
      for (const message of hostile) await publisher.publish(DROPS_CHANNEL, message);
      // A well-formed message for a credential nobody holds drops nothing either.
      await publisher.publish(DROPS_CHANNEL, JSON.stringify({ v: 1, from: 'x', drops: [['recognition', 'B'.repeat(43)]] }));
    } finally {
      publisher.disconnect();
    }
    await emulator.control.clearRequests();
    expect((await gql(b, KEYS)).errors).toBeUndefined();
    expect((await gql(a, KEYS)).errors).toBeUndefined();
    expect(await upstream()).toEqual([]);
    // And the channel still works.
    await gql(a, createKey('after-hostile'));
    expect(labelsOf(await gql(b, KEYS))).toContain('after-hostile');
  });

  it('has a gateway started in its caller\'s process (as `npm start` runs one) on the channel too, both ways', async () => {
    const started = await startRecognitionGateway(subgraph.graphqlUrl, {
      microCache: { fields: new Map([['Query.apiKeys', 60_000]]), maxEntries: 1000, maxBytes: 16 * 1024 * 1024, redisUrl: redis.url },
    });
    const c = { url: started.graphqlUrl };
    try {
      await waitUntil(() => keeps(c, KEYS), () => 'the in-process gateway keeping reads', 15_000);
      await gql(a, KEYS);
      await gql(c, createKey('through-c'));
      expect(labelsOf(await gql(a, KEYS))).toContain('through-c');
      await gql(c, KEYS);
      await gql(b, createKey('to-c'));
      expect(labelsOf(await gql(c, KEYS))).toContain('to-c');
    } finally {
      await started.close();
    }
  });

  it('answers from nothing it kept while Redis does not answer, without holding mutations back, and keeps again once it does', async () => {
    const probe = new Redis(redis.url);
    const pid = Number(/process_id:(\d+)/.exec(await probe.info('server'))?.[1]);
    probe.disconnect();
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGSTOP');
    try {
      // A read that first asks the silent Redis for the drops it may have missed waits at most the
      // command timeout (500 ms), then is answered by the service.
      const asked = performance.now();
      expect((await gql(b, KEYS)).errors).toBeUndefined();
      expect(performance.now() - asked).toBeLessThan(2_000);
      // Within the heartbeat: a silent Redis is noticed without any message missing.
      await waitUntil(async () => !(await keeps(b, KEYS)) && !(await keeps(a, KEYS)), () => 'both gateways to stop answering from what they kept', 5_000);
      const started = performance.now();
      expect((await gql(a, createKey('while-silent'))).errors).toBeUndefined();
      // No wait on a Redis known to be away (at most the 500 ms command timeout, were it not yet known).
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(labelsOf(await gql(b, KEYS))).toContain('while-silent');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitUntil(async () => (await keeps(b, KEYS)) && (await keeps(a, KEYS)), () => 'both gateways keeping reads again', 15_000);
    await gql(a, createKey('after-silence'));
    expect(labelsOf(await gql(b, KEYS))).toContain('after-silence');
  });

  it('answers from nothing it kept while Redis is gone, and keeps again, told of writes, once it is back', async () => {
    const port = Number(new URL(redis.url).port);
    await redis.close();
    let restarted: { close(): Promise<void> } | undefined;
    try {
      await waitUntil(async () => !(await keeps(b, KEYS)), () => 'gateway B to stop answering from what it kept', 5_000);
      const started = performance.now();
      await gql(a, createKey('while-gone'));
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(labelsOf(await gql(b, KEYS))).toContain('while-gone');
      restarted = await startRedisOn(port);
      await waitUntil(async () => (await keeps(b, KEYS)) && (await keeps(a, KEYS)), () => 'both gateways keeping reads again', 15_000);
      await gql(a, createKey('after-return'));
      expect(labelsOf(await gql(b, KEYS))).toContain('after-return');
    } finally {
      // afterAll closes what `redis` names: the server that came back, from now on.
      redis = { url: redis.url, close: async () => restarted?.close() };
    }
  });
});
