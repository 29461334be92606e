import { spawn } from 'node:child_process';
import net from 'node:net';
import { GraphQLBoolean, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, subscribe, type ExecutionResult } from 'graphql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createMessagingEmulator } from '../../emulators/messaging/emulator.ts';
import { DEMO_STORE_ID, DEMO_TOKEN as MESSAGING_TOKEN } from '../../emulators/messaging/data.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { REPLAY_BATCH, followLog } from '../../subgraphs/kit/events/follow.ts';
import { resolveEvent } from '../../subgraphs/kit/events/eventTraces.ts';
import { createRedisLog } from '../../subgraphs/kit/events/redisLog.ts';
import type { LoggedEvent } from '../../subgraphs/kit/events/eventLog.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readMessagingConfig } from '../../subgraphs/messaging/config.ts';
import { createMessagingSubgraph } from '../../subgraphs/messaging/server.ts';
import { requireBinary } from '../support/binaries.ts';
import { knownSecrets, testLogger } from '../support/logs.ts';
import { startRecognitionEmulator, startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { startRoundRobinProxy } from '../support/roundRobinProxy.ts';
import { redisAnswers } from '../support/redisServer.ts';
import { subscribeWs, type Collected } from '../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';
import { startTcpRelay } from '../support/tcpRelay.ts';

/**
 * The event log when its Redis fails (docs/REPLICAS.md, "Limits"; docs/EVENTS.md §5): a Redis that
 * refuses connections or never answers is a transient failure on the subscription path
 * (`UPSTREAM_UNAVAILABLE`, which the gateway retries while resuming), never a masked
 * `INTERNAL_SERVER_ERROR` that ends the stream; and no command on the event path waits on it
 * without bound, so webhook ingestion answers 5xx and the service redelivers.
 */

const SECRET = 'event-log-outage-secret-4d6f8a0c2e';
knownSecrets.add(SECRET);
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const messagingMember = { 'x-messaging-token': MESSAGING_TOKEN };

/** Memoised, so a piece the test stopped itself is not stopped twice when it ends. */
function once(stop: () => Promise<unknown>): () => Promise<void> {
  let stopping: Promise<unknown> | undefined;
  return async () => {
    await (stopping ??= stop());
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A redis-server of this test's own (test/support/redisServer.ts's, plus what an outage needs):
 * stopped and started again on the same port, or silenced with SIGSTOP (it keeps accepting
 * connections and answers nothing) and woken with SIGCONT. Whatever state it is left in, it is
 * woken and stopped when the test ends.
 */
async function startOwnRedis() {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ReturnType<typeof spawn> | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function start(): Promise<void> {
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    child = started;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    await redisAnswers(url);
  }

  async function stop(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
    }
    await exited;
  }

  await start();
  onTestFinished(stop);
  return {
    url,
    port,
    start,
    stop,
    silence: () => void child?.kill('SIGSTOP'),
    wake: () => void child?.kill('SIGCONT'),
  };
}

const bonusDelivery = (id: string) => ({ type: 'bonus.created', data: { id, created_at: '2026-11-22T12:00:00Z', amount: 5, hashtag: '#teamwork', giver: { id: 'usr_001' }, receivers: [{ id: 'usr_002' }] } });

const deliverBonus = (origin: string, id: string, signal?: AbortSignal) =>
  fetch(`${origin}/webhooks/recognition/${SECRET}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bonusDelivery(id)), ...(signal ? { signal } : {}) });

/** As the service does: delivers again until the answer is 2xx. */
async function deliverUntilAccepted(origin: string, id: string): Promise<number> {
  let status = 0;
  await waitUntil(
    async () => {
      status = (await deliverBonus(origin, id, AbortSignal.timeout(5000)).catch(() => undefined))?.status ?? 0;
      return status >= 200 && status < 300;
    },
    () => `a 2xx for ${id} (last answer ${status})`,
    15_000,
  );
  return status;
}

const bonusIds = (subscription: Collected) => subscription.results.map((result) => (result.data?.bonusCreated as { bonus: { id: string } } | undefined)?.bonus.id);
const codes = (result: ExecutionResult | undefined) => (result?.errors ?? []).map((error) => error.extensions?.code);

async function recognitionReplica(emulatorUrl: string, redisUrl: string) {
  const replica = await startRecognitionSubgraph(emulatorUrl, { webhookSecret: SECRET, redisUrl });
  const close = once(() => replica.close());
  onTestFinished(close);
  return { ...replica, close };
}

async function recognitionEmulator() {
  const emulator = await startRecognitionEmulator();
  onTestFinished(() => emulator.close());
  return emulator;
}

describe.skipIf(!requireBinary('redis-server'))('the event log when Redis fails', () => {
  it('a gateway resuming a stream while Redis is down tries again until Redis is back, and its subscribers miss nothing', async () => {
    const redis = await startOwnRedis();
    const emulator = await recognitionEmulator();
    const replicas = [await recognitionReplica(emulator.url, redis.url), await recognitionReplica(emulator.url, redis.url)];
    const balancer = await startRoundRobinProxy();
    onTestFinished(() => balancer.close());
    balancer.setBackends(replicas.map((replica) => replica.url));
    const gateway = await startRecognitionGateway(`${balancer.url}/graphql`);
    onTestFinished(() => gateway.close());

    const subscriber = subscribeWs(gateway.graphqlUrl, 'subscription { bonusCreated { bonus { id } } }', { connectionParams: member });
    onTestFinished(() => subscriber.close());
    await waitUntil(() => balancer.openTunnels().length === 1, () => 'the gateway’s stream through the balancer');
    const serving = balancer.openTunnels()[0]!;
    const other = 1 - serving;
    await waitForEventSubscriptions(replicas[serving]!.graphqlUrl, 1);
    expect((await deliverBonus(replicas[other]!.url, 'bon_before_outage')).status).toBe(202);
    await subscriber.waitFor(1);

    // Redis goes (a restart, a failover), and so does the replica serving the stream: the gateway
    // resumes through the balancer, on the other replica, whose log cannot reach Redis.
    await redis.stop();
    const hitsBefore = balancer.hits.length;
    await replicas[serving]!.close();
    const resumes = () => balancer.hits.slice(hitsBefore).filter((hit) => hit.upgrade && hit.backend === other).length;
    await waitUntil(
      () => resumes() >= 2,
      () => `the gateway resuming again on replica ${other} (resumed ${resumes()} times; the subscriber got ${JSON.stringify(subscriber.results)})`,
    );
    expect(subscriber.results.flatMap(codes)).toEqual([]);

    await redis.start();
    // An append that timed out waiting for the connection is still sent once it is back: the accepted redelivery may be the duplicate.
    expect([200, 202]).toContain(await deliverUntilAccepted(replicas[other]!.url, 'bon_after_outage'));
    await subscriber.waitFor(2, 15_000);
    expect(bonusIds(subscriber)).toEqual(['bon_before_outage', 'bon_after_outage']);
    expect(subscriber.results.flatMap(codes)).toEqual([]);
  });

  it('recognition: subscribing with `after` while Redis is down is UPSTREAM_UNAVAILABLE, not a masked internal error', async () => {
    const redis = await startOwnRedis();
    const emulator = await recognitionEmulator();
    const replica = await recognitionReplica(emulator.url, redis.url);
    const gateway = await startRecognitionGateway(replica.graphqlUrl);
    onTestFinished(() => gateway.close());

    const live = subscribeWs(gateway.graphqlUrl, 'subscription { bonusCreated { cursor bonus { id } } }', { connectionParams: member });
    onTestFinished(() => live.close());
    await waitForEventSubscriptions(replica.graphqlUrl, 1);
    expect((await deliverBonus(replica.url, 'bon_cursor')).status).toBe(202);
    const [first] = await live.waitFor(1);
    const after = (first!.data!.bonusCreated as { cursor: string }).cursor;

    await redis.stop();
    // Another selection than the live one's, so the gateway opens a stream of its own rather than catch up from the live one.
    const resumed = subscribeWs(gateway.graphqlUrl, 'subscription ($after: String) { bonusCreated(after: $after) { bonus { id } } }', { connectionParams: member, variables: { after } });
    onTestFinished(() => resumed.close());
    const [result] = await resumed.waitFor(1);
    expect(codes(result)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(result!.errors![0]!.message).toMatch(/Redis/);
  });

  it('messaging: subscribing with `after` while Redis is down is UPSTREAM_UNAVAILABLE, not a masked internal error', async () => {
    const redis = await startOwnRedis();
    const emulator = await startEmulator(createMessagingEmulator({ rateLimits: false }), 0);
    onTestFinished(() => emulator.close());
    const env = { REDIS_URL: redis.url, MESSAGING_CALLBACK_SECRET: SECRET, UPSTREAM_PACING: 'off' };
    const subgraph = await startSubgraph(await createMessagingSubgraph(readMessagingConfig(env, { apiUrl: emulator.url, port: 0 }), testLogger('messaging-subgraph')), { port: 0 });
    onTestFinished(() => subgraph.close());
    const gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { messaging: `${subgraph.url}/graphql` } }), testLogger('gateway'));
    onTestFinished(() => gateway.close());

    const live = subscribeWs(gateway.graphqlUrl, 'subscription ($s: ID!) { inboundMessageReceived(filter: { storeId: $s }) { messageId cursor } }', { connectionParams: messagingMember, variables: { s: DEMO_STORE_ID } });
    onTestFinished(() => live.close());
    await waitForEventSubscriptions(`${subgraph.url}/graphql`, 1, 'messaging_event_subscriptions');
    const body = new FormData();
    for (const [name, value] of Object.entries({ storeId: DEMO_STORE_ID, from: '+15557770042', messageBody: 'bread', messageId: 'bbbbbbbbbbbbbbbbbbbb0001', keyword: 'BREAD' })) body.append(name, value);
    expect((await fetch(`${subgraph.url}/callbacks/messaging/inbound/${SECRET}`, { method: 'POST', body })).status).toBe(202);
    const [first] = await live.waitFor(1);
    const after = (first!.data!.inboundMessageReceived as { cursor: string }).cursor;

    await redis.stop();
    // Another selection than the live one's, so the gateway opens a stream of its own rather than catch up from the live one.
    const resumed = subscribeWs(gateway.graphqlUrl, 'subscription ($s: ID!, $after: String) { inboundMessageReceived(filter: { storeId: $s }, after: $after) { messageId } }', {
      connectionParams: messagingMember,
      variables: { s: DEMO_STORE_ID, after },
    });
    onTestFinished(() => resumed.close());
    const [result] = await resumed.waitFor(1);
    expect(codes(result)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });

  it('a replay that fails after its first batch ends with a result carrying UPSTREAM_UNAVAILABLE (which the gateway retries), not a failed stream', async () => {
    const redis = await startOwnRedis();
    const log = await createRedisLog({ url: redis.url, prefix: 'graph:outage-test', logger: testLogger('event-log') });
    onTestFinished(() => log.close());
    const positions: string[] = [];
    for (let index = 0; index <= REPLAY_BATCH + 1; index += 1) {
      positions.push((await log.append({ dedupeKey: `k${index}`, type: 't', occurredAt: '2026-11-22T12:00:00Z', payload: { index } })).position!);
    }
    // As the subgraphs wire it: the subscription's source is followLog, its resolve resolveEvent.
    const Event = new GraphQLObjectType<LoggedEvent>({ name: 'Event', fields: { position: { type: new GraphQLNonNull(GraphQLString) } } });
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLBoolean } } }),
      subscription: new GraphQLObjectType({
        name: 'Subscription',
        fields: { events: { type: new GraphQLNonNull(Event), args: { after: { type: GraphQLString } }, subscribe: (_root, { after }: { after: string }) => followLog(log, after), resolve: resolveEvent } },
      }),
    });
    const stream = (await subscribe({ schema, document: parse('subscription ($after: String) { events(after: $after) { position } }'), variableValues: { after: positions[0] }, contextValue: {} })) as AsyncGenerator<ExecutionResult>;
    for (let index = 1; index <= REPLAY_BATCH; index += 1) {
      expect((await stream.next()).value).toEqual({ data: { events: { position: positions[index] } } });
    }
    await redis.stop();
    const failed = await stream.next();
    expect(failed.done).toBe(false);
    expect(failed.value.data).toBeNull();
    expect(codes(failed.value)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect((await stream.next()).done).toBe(true);
    // Ended from within: its live listener went with it.
    expect(log.listeners()).toBe(0);
  });

  it('while Redis is silent, ingestion answers 5xx within its command timeout and a subscriber resuming gets UPSTREAM_UNAVAILABLE; once it answers, the redelivery arrives once', async () => {
    const redis = await startOwnRedis();
    const emulator = await recognitionEmulator();
    const replica = await recognitionReplica(emulator.url, redis.url);
    const gateway = await startRecognitionGateway(replica.graphqlUrl);
    onTestFinished(() => gateway.close());

    const live = subscribeWs(gateway.graphqlUrl, 'subscription { bonusCreated { cursor bonus { id } } }', { connectionParams: member });
    onTestFinished(() => live.close());
    await waitForEventSubscriptions(replica.graphqlUrl, 1);
    expect((await deliverBonus(replica.url, 'bon_1')).status).toBe(202);
    const after = ((await live.waitFor(1))[0]!.data!.bonusCreated as { cursor: string }).cursor;

    redis.silence();
    try {
      // Far past the log's 2 s command timeout: a hang fails here rather than at the test's timeout.
      const answer = await deliverBonus(replica.url, 'bon_2', AbortSignal.timeout(6000));
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');

      const resumed = subscribeWs(gateway.graphqlUrl, 'subscription ($after: String) { bonusCreated(after: $after) { bonus { id } } }', { connectionParams: member, variables: { after } });
      onTestFinished(() => resumed.close());
      expect(codes((await resumed.waitFor(1, 6000))[0])).toEqual(['UPSTREAM_UNAVAILABLE']);
    } finally {
      redis.wake();
    }

    // The append that timed out may still have run once Redis woke: the redelivery is then a duplicate.
    expect([200, 202]).toContain(await deliverUntilAccepted(replica.url, 'bon_2'));
    expect((await deliverBonus(replica.url, 'bon_3')).status).toBe(202);
    await live.waitFor(3, 15_000);
    expect(bonusIds(live)).toEqual(['bon_1', 'bon_2', 'bon_3']);
  });

  it('the live reader gives up a read its connection never answers and reads again on a new one', async () => {
    const redis = await startOwnRedis();
    const link = await startTcpRelay(redis.url);
    onTestFinished(() => link.close());
    // One replica reaches Redis through a link that will hang; another appends directly.
    const reading = await createRedisLog({ url: link.url, prefix: 'graph:outage-test', commandTimeoutMs: 300, readBlockMs: 300, logger: testLogger('event-log') });
    onTestFinished(() => reading.close());
    const writing = await createRedisLog({ url: redis.url, prefix: 'graph:outage-test', logger: testLogger('event-log') });
    onTestFinished(() => writing.close());
    const seen: string[] = [];
    reading.onAppend((event) => seen.push(event.dedupeKey));
    const append = (key: string) => writing.append({ dedupeKey: key, type: 't', occurredAt: '2026-11-22T12:00:00Z', payload: {} });

    await append('before');
    await waitUntil(() => seen.length === 1, () => `the first event read live (saw ${JSON.stringify(seen)})`);
    // Idle for several reads' blocks: a read's timeout must outlast its block, or live reading would fail between events.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await append('after idling');
    await waitUntil(() => seen.length === 2, () => `the event after idling (saw ${JSON.stringify(seen)})`);

    // The connections open now stop carrying anything, both ways, and are never closed.
    const connections = link.accepted;
    link.freeze();
    await append('after the hang');
    await waitUntil(() => seen.length === 3, () => `the event read on a new connection (saw ${JSON.stringify(seen)})`);
    expect(seen).toEqual(['before', 'after idling', 'after the hang']);
    expect(link.accepted).toBeGreaterThan(connections);
  });
});
