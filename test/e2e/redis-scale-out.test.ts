import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { requireBinary } from '../support/binaries.ts';
import { knownSecrets } from '../support/logs.ts';
import { startRedis } from '../support/redisServer.ts';
import { startRecognitionEmulator, startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { subscribeSse, subscribeWs } from '../support/subscribers.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const SECRETS = ['replica-a-secret-1f3e5d7c9b', 'replica-b-secret-2e4f6a8c0d'] as const;
for (const secret of SECRETS) knownSecrets.add(secret);

let redis: Awaited<ReturnType<typeof startRedis>>;
let emulator: Awaited<ReturnType<typeof startRecognitionEmulator>>;
let replicas: Awaited<ReturnType<typeof startRecognitionSubgraph>>[] = [];
let gateways: Awaited<ReturnType<typeof startRecognitionGateway>>[] = [];

const member = { 'x-recognition-token': DEMO_TOKENS.member };
const deliver = (replica: number, id: string) =>
  fetch(`${replicas[replica]!.url}/webhooks/recognition/${SECRETS[replica]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'bonus.created', data: { id, created_at: '2026-11-22T12:00:00Z', amount: 5, hashtag: '#teamwork', giver: { id: 'usr_001' }, receivers: [{ id: 'usr_002' }] } }),
  });

describe.skipIf(!requireBinary('redis-server'))('scale-out with Redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
    emulator = await startRecognitionEmulator();
    // Two replicas on one Redis, each registered with the service under its own address.
    replicas = [
      await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRETS[0], redisUrl: redis.url }),
      await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRETS[1], redisUrl: redis.url }),
    ];
    gateways = [await startRecognitionGateway(replicas[0]!.graphqlUrl), await startRecognitionGateway(replicas[1]!.graphqlUrl)];
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    for (const replica of replicas) await replica.close();
    await emulator?.close();
    await redis?.close();
  });

  it('delivers an event received by either replica to subscribers of both gateways, exactly once', async () => {
    const query = 'subscription { bonusCreated { bonus { id } } }';
    const onFirst = subscribeWs(gateways[0]!.graphqlUrl, query, { connectionParams: member });
    const onSecond = subscribeSse(gateways[1]!.graphqlUrl, query, { headers: member });
    try {
      await waitForEventSubscriptions(replicas[0]!.graphqlUrl, 1);
      await waitForEventSubscriptions(replicas[1]!.graphqlUrl, 1);

      // The emulator posts to both registered webhooks; the shared dedupe keeps one.
      const given = ((await emulator.control.control('bonuses', {})) as { bonus: { id: string } }).bonus.id;
      // Its deliveries are asynchronous: let them land before the direct ones, to fix the order.
      await onFirst.waitFor(1);
      await onSecond.waitFor(1);
      expect((await deliver(0, 'bon_via_a')).status).toBe(202);
      expect((await deliver(1, 'bon_via_b')).status).toBe(202);
      // The same event at both replicas: the second is a duplicate wherever it lands.
      expect((await deliver(1, 'bon_twice')).status).toBe(202);
      expect((await deliver(0, 'bon_twice')).status).toBe(200);
      expect((await deliver(0, 'bon_last')).status).toBe(202);

      for (const subscription of [onFirst, onSecond]) {
        const ids = (await subscription.waitFor(5)).map((result) => (result.data!.bonusCreated as { bonus: { id: string } }).bonus.id);
        expect(ids).toEqual([given, 'bon_via_a', 'bon_via_b', 'bon_twice', 'bon_last']);
        expect(subscription.results).toHaveLength(5);
      }
    } finally {
      onFirst.close();
      onSecond.close();
      await waitForEventSubscriptions(replicas[0]!.graphqlUrl, 0);
      await waitForEventSubscriptions(replicas[1]!.graphqlUrl, 0);
    }
  });

  it('replays from a cursor issued by the other replica', async () => {
    const onFirst = subscribeWs(gateways[0]!.graphqlUrl, 'subscription { bonusCreated { cursor bonus { id } } }', { connectionParams: member });
    try {
      await waitForEventSubscriptions(replicas[0]!.graphqlUrl, 1);
      await deliver(0, 'bon_cursor_1');
      await deliver(0, 'bon_cursor_2');
      const [first] = await onFirst.waitFor(2);
      const cursor = (first!.data!.bonusCreated as { cursor: string }).cursor;
      const resumed = subscribeSse(gateways[1]!.graphqlUrl, 'subscription ($after: String) { bonusCreated(after: $after) { bonus { id } } }', { headers: member, variables: { after: cursor } });
      try {
        expect((await resumed.waitFor(1))[0]!.data).toEqual({ bonusCreated: { bonus: { id: 'bon_cursor_2' } } });
      } finally {
        resumed.close();
      }
    } finally {
      onFirst.close();
    }
  });
});
