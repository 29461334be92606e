import { describe, expect, it, onTestFinished } from 'vitest';
import { Redis } from 'ioredis';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { requireBinary } from '../../support/binaries.ts';
import { knownSecrets } from '../../support/logs.ts';
import { startRedis } from '../../support/redisServer.ts';
import { startGatewayOver, startTestStack } from '../../support/stack.ts';

/**
 * The caller rate limit counts each credential a request carries. A request that adds a credential
 * header of a service it never uses, or a junk value for one, each time different, is still counted
 * against the real credential beside it: it gets no fresh bucket, and refused requests leave no
 * bucket behind in Redis.
 */
const { stack, emulator } = await startTestStack();
const LIMITS = { RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '4' };
const SELLER = { 'x-marketplace-email': 'seller@demo.example', 'x-marketplace-api-key': 'demo-mkt-api-key-3e9b7c1a5d2f8e4b' };

const post = (url: string, headers: Record<string, string>, query = '{ hashtagTrends { hashtag } }') =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });

/**
 * 20 requests at once, spread over the gateways in turn: whether no more went through than the
 * bucket allows in the time they took (the burst of 4, one a second, and one for rounding), and how
 * many did. A busy machine stretches the time; it never makes 20 of 20 right.
 */
async function burst(urls: readonly string[], headersOf: (index: number) => Record<string, string>, query?: string): Promise<{ allowed: number; withinLimit: boolean }> {
  const started = performance.now();
  const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => post(urls[index % urls.length]!, headersOf(index), query)));
  const seconds = (performance.now() - started) / 1000;
  for (const response of responses) expect([200, 429]).toContain(response.status);
  const allowed = responses.filter((response) => response.status === 200).length;
  return { allowed, withinLimit: allowed <= 4 + Math.ceil(seconds) + 1 };
}

async function junkIsNoBypass(urls: readonly string[], rateKeys: () => Promise<number>) {
  const recognition = emulator('recognition');
  const junk = (index: number) => `junk-${index}-${Math.random().toString(36).slice(2)}`;

  expect(await burst(urls, () => ({ 'x-recognition-token': DEMO_TOKENS.member }))).toMatchObject({ withinLimit: true });

  await recognition.clearRequests();
  const keysBefore = await rateKeys();
  const padded = await burst(urls, (index) => ({ 'x-recognition-token': DEMO_TOKENS.admin, 'x-imports-apikey': junk(index) }));
  // Limited like the credential alone, not 20 of 20.
  expect(padded).toMatchObject({ withinLimit: true });
  expect((await recognition.requests()).length).toBeLessThanOrEqual(padded.allowed);
  // A bucket for the credential and at most one per request let through; none for the refused.
  expect((await rateKeys()) - keysBefore).toBeLessThanOrEqual(1 + padded.allowed);

  // Junk under other services' headers, alternating, changes nothing either.
  expect(await burst(urls, (index) => ({ 'x-recognition-token': DEMO_TOKENS.readOnly, [index % 2 ? 'x-dashboards-token' : 'x-messaging-token']: junk(index) }))).toMatchObject({ withinLimit: true });

  // An address anyone may know (the seller's email) is no caller by itself: strangers pairing it
  // with made-up keys do not spend the seller's limit.
  expect(await burst(urls, (index) => ({ 'x-marketplace-email': SELLER['x-marketplace-email'], 'x-marketplace-api-key': junk(index) }), '{ __typename }')).toMatchObject({ allowed: 20 });
  expect((await post(urls[0]!, SELLER, '{ __typename }')).status).toBe(200);

  // Another part of the same service's credential, varied: the API key beside it still counts.
  expect(await burst(urls, (index) => ({ ...SELLER, 'x-marketplace-account-key': junk(index) }), '{ __typename }')).toMatchObject({ withinLimit: true });
}

knownSecrets.add(SELLER['x-marketplace-api-key']);

describe('the caller rate limit with junk credential headers beside a real one', () => {
  it('holds in one gateway without Redis', async () => {
    const gateway = await startGatewayOver(stack, LIMITS, 'padded-credentials-gateway');
    await junkIsNoBypass([gateway.graphqlUrl], async () => 0);
  });
});

describe.skipIf(!requireBinary('redis-server'))('the caller rate limit with junk credential headers, on Redis', () => {
  it('holds across two gateways sharing one Redis, and fills Redis with no bucket per refused request', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.close());
    const inspect = new Redis(redis.url);
    onTestFinished(() => void inspect.disconnect());
    const env = { ...LIMITS, REDIS_URL: redis.url };
    const gateways = [await startGatewayOver(stack, env, 'padded-credentials-a'), await startGatewayOver(stack, env, 'padded-credentials-b')];
    const rateKeys = async () => (await inspect.keys('graph:rate:c:*')).length;
    // A gateway whose first Redis command outlived its timeout (a cold start on a busy machine)
    // counts alone for 5 s, and two such would let two bursts through: wait until each one writes
    // its buckets in Redis.
    for (const gateway of gateways) {
      await expect
        .poll(
          async () => {
            const before = await rateKeys();
            await post(gateway.graphqlUrl, { 'x-recognition-token': `warm-up-${Math.random()}` }, '{ __typename }');
            return (await rateKeys()) > before;
          },
          { timeout: 15_000, interval: 200 },
        )
        .toBe(true);
    }
    await junkIsNoBypass(gateways.map((gateway) => gateway.graphqlUrl), rateKeys);
  }, 60_000);
});
