import { afterAll, describe, expect, it } from 'vitest';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readMessagingConfig } from '../../subgraphs/messaging/config.ts';
import { createMessagingSubgraph } from '../../subgraphs/messaging/server.ts';
import { knownSecrets, testLogger } from '../support/logs.ts';
import { DEMO_STORE_ID, member, messagingOf } from '../support/messagingPieces.ts';
import { startRedis } from '../support/redisServer.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeWs } from '../support/subscribers.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const SECRET = 'messaging-shared-secret-3c5e7a9b1d';
knownSecrets.add(SECRET);
const redis = await startRedis();
afterAll(() => redis.close());
const t = await startTestStack({ REDIS_URL: redis.url, MESSAGING_CALLBACK_SECRET: SECRET });
const m = messagingOf(t);
// A second replica behind the same callback secret, sharing the event log: the service may post to either.
const replica = await startSubgraph(
  await createMessagingSubgraph(readMessagingConfig({ REDIS_URL: redis.url, MESSAGING_CALLBACK_SECRET: SECRET }, { apiUrl: m.emulator.url, port: 0 }), testLogger('messaging-replica')),
  { port: 0 },
);
afterAll(() => replica.close());

const deliver = (origin: string, messageId: string) => {
  const body = new FormData();
  for (const [name, value] of Object.entries({ storeId: DEMO_STORE_ID, from: '+15557770042', messageBody: 'bread', messageId, keyword: 'BREAD' })) body.append(name, value);
  return fetch(`${origin}/callbacks/messaging/inbound/${SECRET}`, { method: 'POST', body });
};

describe('messaging events on Redis', () => {
  it('a callback received by either replica reaches subscribers once, and a redelivery to the other is a duplicate', async () => {
    const subscription = subscribeWs(t.graphqlUrl, 'subscription($s: ID!) { inboundMessageReceived(filter: { storeId: $s }) { messageId } }', { variables: { s: DEMO_STORE_ID }, connectionParams: member });
    try {
      await waitForEventSubscriptions(m.subgraphUrl, 1, 'messaging_event_subscriptions');
      expect((await deliver(replica.url, 'aaaaaaaaaaaaaaaaaaaa0001')).status).toBe(202);
      expect((await deliver(m.subgraphOrigin, 'aaaaaaaaaaaaaaaaaaaa0001')).status).toBe(200);
      expect((await deliver(m.subgraphOrigin, 'aaaaaaaaaaaaaaaaaaaa0002')).status).toBe(202);
      const received = (await subscription.waitFor(2)).map((result) => (result.data!.inboundMessageReceived as { messageId: string }).messageId);
      expect(received).toEqual(['aaaaaaaaaaaaaaaaaaaa0001', 'aaaaaaaaaaaaaaaaaaaa0002']);
    } finally {
      subscription.close();
    }
  });
});
