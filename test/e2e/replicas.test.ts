import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { ExecutionResult } from 'graphql';
import { launch, type Child } from '../../bench/processes.ts';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createMarketplaceEmulator } from '../../emulators/marketplace/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { DEMO_APIKEY as IMPORTS_APIKEY } from '../../emulators/imports/data.ts';
import { pointStoreCallbacks } from '../../emulators/messaging/control.ts';
import { DEMO_STORE_ID, DEMO_TOKEN as MESSAGING_TOKEN } from '../../emulators/messaging/data.ts';
import { createMessagingEmulator } from '../../emulators/messaging/emulator.ts';
import { callbackUrls } from '../../subgraphs/messaging/server.ts';
import { SERVICE_ENTRY, SERVICES } from '../../lib/services.ts';
import { requireBinary } from '../support/binaries.ts';
import { capturedLogs, knownSecrets } from '../support/logs.ts';
import { startImportsEmulator } from '../support/importsPieces.ts';
import { startRecognitionEmulator } from '../support/recognitionPieces.ts';
import { startRedis } from '../support/redisServer.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/roundRobinProxy.ts';
import { emulatorControl } from '../support/stack.ts';
import { subscribeResuming, subscribeWs } from '../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/**
 * Issue 22, part 5: two gateways and two replicas of each stateful subgraph, every one its own
 * process, on one Redis, each pair behind a round-robin balancer. A replica killed mid-stream
 * (SIGKILL: no goodbye) loses nothing: a subscriber that resumes by cursor as docs/EVENTS.md says
 * receives every event once and in order (recognition's webhooks, messaging's callbacks), and a
 * label PDF link outlives the replica that made it; an import's status subscriber misses no change
 * when the replica holding its poller lease dies, as the other replica takes the polling over.
 */
const WEBHOOK_SECRET = 'replicas-shared-webhook-secret-4d6f8b';
const CURSOR_SECRET = 'replicas-shared-cursor-secret-0123456789abcdef';
const CALLBACK_SECRET = 'replicas-shared-callback-secret-7a9c1e';
knownSecrets.add(WEBHOOK_SECRET);
knownSecrets.add(CALLBACK_SECRET);
knownSecrets.add(CURSOR_SECRET);

const member = { 'x-recognition-token': DEMO_TOKENS.member };
const seller = SELLER_HEADERS;
const BONUSES = 'subscription ($after: String) { bonusCreated(after: $after) { cursor bonus { id } } }';
type BonusEvent = { cursor: string; bonus: { id: string } };
const eventOf = (result: ExecutionResult<Record<string, unknown>>) => result.data?.bonusCreated as BonusEvent | undefined;

describe.skipIf(!requireBinary('redis-server'))('two gateways and two replicas of each stateful subgraph on one Redis', () => {
  const children: Child[] = [];
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let recognitionEmulator: Awaited<ReturnType<typeof startRecognitionEmulator>>;
  let marketplaceEmulator: Awaited<ReturnType<typeof startEmulator>>;
  let messagingEmulator: Awaited<ReturnType<typeof startEmulator>>;
  let importsEmulator: Awaited<ReturnType<typeof startImportsEmulator>>;
  const balancers: RoundRobinProxy[] = [];
  let recognitionLb: RoundRobinProxy;
  let marketplaceLb: RoundRobinProxy;
  let messagingLb: RoundRobinProxy;
  let importsLb: RoundRobinProxy;
  let gatewayLb: RoundRobinProxy;
  let recognition: Child[];
  let marketplace: Child[];
  let messaging: Child[];
  let imports: Child[];
  let gateways: Child[];

  async function start(name: string, entry: string, env: Record<string, string>): Promise<Child> {
    // Every line each replica logs joins the file's captured logs, which are searched for credentials.
    let partial = '';
    const onOutput = (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) capturedLogs.push(`${line}\n`);
    };
    const child = await launch({ name, entry, env: { LOG_LEVEL: 'info', REDIS_URL: redis.url, ...env }, readyTimeoutMs: 60_000, onOutput });
    children.push(child);
    return child;
  }

  beforeAll(async () => {
    redis = await startRedis();
    recognitionEmulator = await startRecognitionEmulator();
    // Pacing is per process: two replicas sharing one seller's 1 request/s would meet the emulator's
    // 429s, which are not what this test is about (docs/LIMITS.md, upstream pacing).
    marketplaceEmulator = await startEmulator(createMarketplaceEmulator({ rateLimits: false }), 0);
    messagingEmulator = await startEmulator(createMessagingEmulator({ deliveryRetryMs: 40, rateLimits: false }), 0);
    importsEmulator = await startImportsEmulator();
    // Jobs change only when the test forces a status, never because real time passed.
    await importsEmulator.control.control('processing', { ms: 3_600_000 });
    [recognitionLb, marketplaceLb, messagingLb, importsLb, gatewayLb] = [await startRoundRobinProxy(), await startRoundRobinProxy(), await startRoundRobinProxy(), await startRoundRobinProxy(), await startRoundRobinProxy()];
    balancers.push(recognitionLb, marketplaceLb, messagingLb, importsLb, gatewayLb);

    // The service posts its webhooks to the balancer's address; the replicas share its secret.
    const recognitionEnv = {
      [SERVICE_ENTRY.recognition.env.apiUrl]: recognitionEmulator.url,
      [SERVICE_ENTRY.recognition.env.subgraphPort]: '0',
      RECOGNITION_PUBLIC_URL: recognitionLb.url,
      RECOGNITION_SERVICE_TOKEN: DEMO_TOKENS.admin,
      RECOGNITION_WEBHOOK_SECRET: WEBHOOK_SECRET,
    };
    // One after the other: each makes sure of the one webhook at start (list, then create or keep).
    recognition = [await start('recognition-1', 'subgraphs/recognition/main.ts', recognitionEnv), await start('recognition-2', 'subgraphs/recognition/main.ts', recognitionEnv)];
    const marketplaceEnv = { [SERVICE_ENTRY.marketplace.env.apiUrl]: marketplaceEmulator.url, [SERVICE_ENTRY.marketplace.env.subgraphPort]: '0', CURSOR_SECRET };
    marketplace = await Promise.all([start('marketplace-1', 'subgraphs/marketplace/main.ts', marketplaceEnv), start('marketplace-2', 'subgraphs/marketplace/main.ts', marketplaceEnv)]);
    const messagingEnv = { [SERVICE_ENTRY.messaging.env.apiUrl]: messagingEmulator.url, [SERVICE_ENTRY.messaging.env.subgraphPort]: '0', MESSAGING_CALLBACK_SECRET: CALLBACK_SECRET };
    messaging = await Promise.all([start('messaging-1', 'subgraphs/messaging/main.ts', messagingEnv), start('messaging-2', 'subgraphs/messaging/main.ts', messagingEnv)]);
    // The store's callbacks go to the balancer, so either replica receives each one.
    await pointStoreCallbacks(messagingEmulator.url, DEMO_STORE_ID, callbackUrls(messagingLb.url, CALLBACK_SECRET));
    recognitionLb.setBackends(recognition.map((child) => child.url));
    marketplaceLb.setBackends(marketplace.map((child) => child.url));
    messagingLb.setBackends(messaging.map((child) => child.url));
    // Short waits so a lease left by a killed holder runs out within a second (docs/services/imports.md, "Across replicas").
    const importsEnv = {
      [SERVICE_ENTRY.imports.env.apiUrl]: importsEmulator.url,
      [SERVICE_ENTRY.imports.env.subgraphPort]: '0',
      IMPORTS_POLL_INITIAL_MS: '50',
      IMPORTS_POLL_MAX_MS: '200',
      IMPORTS_LEASE_MS: '1000',
    };
    imports = await Promise.all([start('imports-1', 'subgraphs/imports/main.ts', importsEnv), start('imports-2', 'subgraphs/imports/main.ts', importsEnv)]);
    importsLb.setBackends(imports.map((child) => child.url));

    // Services this test does not run answer nothing; the gateways never call them here.
    const subgraphUrls = Object.fromEntries(SERVICES.map((service) => [service.env.subgraphUrl, 'http://127.0.0.1:9/graphql']));
    const gatewayEnv = {
      ...subgraphUrls,
      [SERVICE_ENTRY.recognition.env.subgraphUrl]: `${recognitionLb.url}/graphql`,
      [SERVICE_ENTRY.marketplace.env.subgraphUrl]: `${marketplaceLb.url}/graphql`,
      [SERVICE_ENTRY.messaging.env.subgraphUrl]: `${messagingLb.url}/graphql`,
      [SERVICE_ENTRY.imports.env.subgraphUrl]: `${importsLb.url}/graphql`,
      GATEWAY_PORT: '0',
      PUBLIC_URL: gatewayLb.url,
    };
    gateways = await Promise.all([start('gateway-1', 'gateway/main.ts', gatewayEnv), start('gateway-2', 'gateway/main.ts', gatewayEnv)]);
    gatewayLb.setBackends(gateways.map((child) => child.url.replace(/\/graphql$/, '')));
  }, 180_000);

  afterAll(async () => {
    for (const child of children) await child.kill('SIGKILL');
    for (const balancer of balancers) await balancer.close();
    await recognitionEmulator?.close();
    await marketplaceEmulator?.close();
    await messagingEmulator?.close();
    await importsEmulator?.close();
    await redis?.close();
  });

  it('a subscriber resuming by cursor receives every bonus once and in order while a recognition replica and a gateway are killed', async () => {
    const given: string[] = [];
    const give = async (count: number) => {
      for (let index = 0; index < count; index += 1) {
        given.push(((await recognitionEmulator.control.control('bonuses', { giver_id: 'usr_003', receiver_ids: ['usr_004'] })) as { bonus: { id: string } }).bonus.id);
      }
    };
    // The client stays away after losing its gateway until the test lets it back.
    let letBack!: () => void;
    const away = new Promise<void>((resolve) => (letBack = resolve));
    const subscriber = subscribeResuming(`${gatewayLb.url}/graphql`, BONUSES, { connectionParams: member, cursorOf: (result) => eventOf(result)?.cursor, beforeReconnect: () => away });
    const inspect = new Redis(redis.url);
    try {
      // The gateway that took the client opened one stream to a recognition replica, which follows the log.
      await waitUntil(() => recognitionLb.openTunnels().length === 1, () => 'the gateway to open its stream to a recognition replica', 20_000);
      const [streaming] = recognitionLb.openTunnels() as [number];
      await waitForEventSubscriptions(recognition[streaming]!.url, 1);

      // The balancer's turns are shared with all other traffic: bonuses are given until the service's
      // webhooks have reached both replicas (each delivered event proves its webhook arrived).
      const webhookBackends = () => new Set(recognitionLb.hits.filter((hit) => hit.path.startsWith('/webhooks/recognition/')).map((hit) => hit.backend));
      while (given.length < 3 || (webhookBackends().size < 2 && given.length < 12)) {
        await give(1);
        await subscriber.waitFor(given.length, 20_000);
      }
      expect(webhookBackends()).toEqual(new Set([0, 1]));

      // Mid-stream, the replica serving the stream dies; bonuses keep coming while the gateway resumes.
      await recognition[streaming]!.kill('SIGKILL');
      await give(3);
      await subscriber.waitFor(given.length, 30_000);
      expect(recognitionLb.openTunnels()).toEqual([1 - streaming]);

      // Then the gateway holding the client dies, and bonuses reach the log while the client is away:
      // it resumes through the other gateway with its last cursor, and the log replays them.
      const [holding] = gatewayLb.openTunnels() as [number];
      await gateways[holding]!.kill('SIGKILL');
      await waitUntil(() => subscriber.closeCodes.length === 1, () => 'the client to see its gateway gone');
      const logged = await inspect.xlen('graph:recognition:events');
      await give(3);
      await waitUntil(async () => (await inspect.xlen('graph:recognition:events')) === logged + 3, () => 'the three bonuses to reach the log');
      expect(subscriber.results).toHaveLength(given.length - 3);
      letBack();
      await subscriber.waitFor(given.length, 30_000);
      expect(subscriber.connections()).toBe(2);
      expect(subscriber.closeCodes).toEqual([1006]);
      expect(gatewayLb.hits.filter((hit) => hit.upgrade).map((hit) => hit.backend)).toEqual([holding, 1 - holding]);

      // A last bonus after everything: a repeat still queued anywhere would arrive before it.
      await give(1);
      await subscriber.waitFor(given.length, 20_000);
      const received = subscriber.results.map((result) => eventOf(result)!.bonus.id);
      expect(received).toHaveLength(given.length);
      expect(new Set(received).size).toBe(given.length);
      expect([...received].sort()).toEqual([...given].sort());
      expect(received.at(-1)).toBe(given.at(-1));
      // In order: the order of the shared log, whichever replica received each webhook.
      const order = (await inspect.xrange('graph:recognition:events', '-', '+')).map(([, fields]) => (JSON.parse(fields[1]!) as { dedupeKey: string }).dedupeKey.replace(/^bonus\.created:/, ''));
      expect(received).toEqual(order.filter((id) => given.includes(id)));
    } finally {
      subscriber.close();
      inspect.disconnect();
    }
  }, 120_000);

  it('a label PDF link made on one marketplace replica downloads from the other once the first is killed', async () => {
    const before = marketplaceLb.hits.length;
    const answer = await fetch(`${gatewayLb.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...seller },
      body: JSON.stringify({ query: '{ labelGroup(id: "7001") { labelsPdf { url } } }' }),
    });
    const result = (await answer.json()) as { data?: { labelGroup: { labelsPdf: { url: string } } }; errors?: unknown };
    expect(result.errors).toBeUndefined();
    const link = result.data!.labelGroup.labelsPdf.url;
    expect(link.startsWith(`${gatewayLb.url}/downloads/marketplace/`)).toBe(true);
    const made = marketplaceLb.hits.slice(before).filter((hit) => hit.path === '/graphql');
    expect(made).toHaveLength(1);

    await marketplace[made[0]!.backend]!.kill('SIGKILL');
    const market = emulatorControl(marketplaceEmulator.url);
    await market.clearRequests();
    const download = await fetch(link);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await download.arrayBuffer()).toString('latin1').startsWith('%PDF-1.4')).toBe(true);
    const served = marketplaceLb.hits.filter((hit) => hit.path.startsWith('/downloads/'));
    expect(served.map((hit) => hit.backend)).toEqual([1 - made[0]!.backend]);
    // The surviving replica fetched it with the credential of the caller who made the link.
    const [call] = await market.requests();
    expect(call).toMatchObject({ method: 'GET', path: '/shipments/mkt/view', query: { plp_id: '7001' }, status: 200 });
  }, 60_000);

  it('texts received by either messaging replica reach a subscriber once and in order while the replica serving its stream is killed', async () => {
    const received = (subscriber: { results: ExecutionResult<Record<string, unknown>>[] }) =>
      subscriber.results.map((result) => (result.data!.inboundMessageReceived as { messageId: string }).messageId);
    const sent: string[] = [];
    const text = async (count: number) => {
      for (let index = 0; index < count; index += 1) {
        const answer = (await emulatorControl(messagingEmulator.url).control('inbound', { from: `1555777${String(sent.length).padStart(4, '0')}`, body: 'BREAD', storeId: DEMO_STORE_ID })) as { messageId: string };
        sent.push(answer.messageId);
      }
    };
    const subscriber = subscribeResuming(`${gatewayLb.url}/graphql`, 'subscription ($s: ID!, $after: String) { inboundMessageReceived(filter: { storeId: $s }, after: $after) { cursor messageId } }', {
      variables: { s: DEMO_STORE_ID },
      connectionParams: { 'x-messaging-token': MESSAGING_TOKEN },
      cursorOf: (result) => (result.data?.inboundMessageReceived as { cursor?: string } | undefined)?.cursor,
    });
    const inspect = new Redis(redis.url);
    try {
      await waitUntil(() => messagingLb.openTunnels().length === 1, () => 'the gateway to open its stream to a messaging replica', 20_000);
      const [streaming] = messagingLb.openTunnels() as [number];
      await waitForEventSubscriptions(messaging[streaming]!.url, 1, 'messaging_event_subscriptions');
      await text(2);
      await subscriber.waitFor(2, 20_000);

      await messaging[streaming]!.kill('SIGKILL');
      await text(3);
      await subscriber.waitFor(5, 30_000);
      expect(messagingLb.openTunnels()).toEqual([1 - streaming]);
      expect(received(subscriber)).toHaveLength(5);
      expect(new Set(received(subscriber))).toEqual(new Set(sent));
      const order = (await inspect.xrange('graph:messaging:events', '-', '+')).map(([, fields]) => (JSON.parse(fields[1]!) as { dedupeKey: string }).dedupeKey);
      expect(order.filter((key) => sent.some((id) => key.endsWith(id))).map((key) => sent.find((id) => key.endsWith(id)))).toEqual(received(subscriber));
    } finally {
      subscriber.close();
      inspect.disconnect();
    }
  }, 60_000);

  it("an import's status subscriber misses no change while the replica holding the poller lease is killed, and the other replica takes the polling over", async () => {
    const auth = { 'x-imports-apikey': IMPORTS_APIKEY };
    const gauge = async (child: Child, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(child.url.replace(/\/graphql$/, '/metrics'))).text())?.[1] ?? -1);
    const created = await fetch(`${gatewayLb.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ query: 'mutation ($input: CreateImportInput!) { createImport(input: $input) { id } }', variables: { input: { apiId: 'api_1001', fileLocation: importsEmulator.file('petstore.json') } } }),
    });
    const result = (await created.json()) as { data?: { createImport: { id: string } }; errors?: unknown };
    expect(result.errors).toBeUndefined();
    const id = result.data!.createImport.id;
    const subscriber = subscribeWs(`${gatewayLb.url}/graphql`, 'subscription ($id: ID!) { importStatusChanged(id: $id) { status statusText } }', { variables: { id }, connectionParams: auth });
    const statuses = () => subscriber.results.map((event) => (event.data?.importStatusChanged as { statusText: string }).statusText);
    try {
      await subscriber.waitFor(1, 20_000);
      // The one stream goes to one replica, the only one watching the import: it takes the lease and polls.
      await waitUntil(() => importsLb.openTunnels().length === 1, () => 'the gateway to open its stream to an imports replica', 20_000);
      const [streaming] = importsLb.openTunnels() as [number];
      const polls: number[] = [];
      await waitUntil(async () => {
        polls.splice(0, 2, await gauge(imports[0]!, 'imports_status_polls'), await gauge(imports[1]!, 'imports_status_polls'));
        return polls.some((count) => count > 0);
      }, () => `a replica to poll the import (polls ${polls.join(', ')})`, 20_000);
      const holder = polls.findIndex((count) => count > 0);
      const survivor = imports[1 - holder]!;
      expect(holder).toBe(streaming);
      expect(polls[1 - holder]).toBe(0);

      // Mid-stream, the holder dies without giving its lease up; the gateway subscribes again through the balancer.
      await imports[holder]!.kill('SIGKILL');
      await waitForEventSubscriptions(survivor.url, 1, 'imports_status_subscriptions');
      expect(importsLb.openTunnels()).toEqual([1 - holder]);
      // Only a poll can show these changes to the survivor, and it polls only once it holds the lease.
      await importsEmulator.control.control(`imports/${id}`, { status: 'validating' });
      await waitUntil(() => statuses().includes('validating'), () => `the subscriber to receive validating (got ${statuses().join(', ')})`, 20_000);
      expect(await gauge(survivor, 'imports_status_polls')).toBeGreaterThan(0);
      await importsEmulator.control.control(`imports/${id}`, { status: 'completed', message: 'Imported 2 paths' });
      await subscriber.ended;

      // A status is a state, not a log: a resubscribed stream starts with the current status, which
      // may repeat the last one received (docs/services/imports.md, "Limits"). Repeats are therefore
      // allowed only back to back, at most one, and nothing may be lost or out of order.
      const received = statuses();
      const changes = received.filter((status, index) => status !== received[index - 1]);
      expect(changes).toEqual(['in_progress', 'validating', 'completed']);
      expect(received.length - changes.length).toBeLessThanOrEqual(1);
      expect(await gauge(survivor, 'imports_status_polls')).toBeGreaterThan(0);
    } finally {
      subscriber.close();
    }
  }, 60_000);
});
