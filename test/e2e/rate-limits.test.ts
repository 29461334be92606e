import { describe, expect, it, onTestFinished } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { requireBinary } from '../support/binaries.ts';
import { startRedis } from '../support/redisServer.ts';
import { startGatewayOver, startTestStack } from '../support/stack.ts';
import { subscribeWs } from '../support/subscribers.ts';
import { overWs } from '../support/transports.ts';
import { startSilentServer } from '../support/silentServer.ts';

const { stack } = await startTestStack();
const gatewayWith = (env: Record<string, string>) => startGatewayOver(stack, env, 'rate-limited-gateway');

const query = (url: string, token: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-recognition-token': token }, body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }) });

/** Many requests at once: a bucket of `burst` lets about that many through before it refills. */
async function burstOf(count: number, send: (index: number) => Promise<Response>) {
  const responses = await Promise.all(Array.from({ length: count }, (_, index) => send(index)));
  const refused = responses.filter((response) => response.status === 429);
  return { allowed: responses.length - refused.length, refused };
}

describe('rate limits', () => {
  it('refuse a caller past its burst with RATE_LIMITED, retryAfterSeconds and Retry-After, while another caller goes on', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '3' });
    const { allowed, refused } = await burstOf(10, () => query(gateway.graphqlUrl, DEMO_TOKENS.member));
    expect(allowed).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(0);
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused[0]!.json()).toEqual({ errors: [{ message: expect.stringContaining('caller'), extensions: { code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) } }] });
    // The credential is the caller: another one has a bucket of its own.
    expect((await query(gateway.graphqlUrl, DEMO_TOKENS.admin)).status).toBe(200);
  });

  it('refuse in application/graphql-response+json to a client that prefers it, as Apollo Client 4 does, so that it keeps the code', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '1' });
    const accept = 'application/graphql-response+json,application/json;q=0.9';
    const send = () => fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept, 'x-recognition-token': DEMO_TOKENS.member }, body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }) });
    const { refused } = await burstOf(4, send);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(await refused[0]!.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
  });

  it('refuse a client address past its burst whatever credentials it sends', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_ADDRESS_PER_SECOND: '1', RATE_LIMIT_ADDRESS_BURST: '2' });
    const tokens = Object.values(DEMO_TOKENS);
    const { refused } = await burstOf(9, (index) => query(gateway.graphqlUrl, tokens[index % tokens.length]!));
    expect(refused.length).toBeGreaterThan(0);
    expect(((await refused[0]!.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('address');
  });

  it('count each client behind a trusted proxy by the address the proxy appended to X-Forwarded-For, an IPv6 one by its /64', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_ADDRESS_PER_SECOND: '1', RATE_LIMIT_ADDRESS_BURST: '1', TRUSTED_PROXIES: '127.0.0.1' });
    const from = (forwardedFor: string) =>
      fetch(gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, 'x-forwarded-for': forwardedFor },
        body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }),
      });
    const statuses: Record<string, number> = {};
    for (const forwardedFor of [
      '203.0.113.1',
      '203.0.113.1',
      // What a client wrote sits left of what the proxy appended: the client is 203.0.113.1.
      '198.51.100.7, 203.0.113.1',
      '203.0.113.2',
      // Through a second proxy of ours: the client is the address before it.
      '203.0.113.3, 127.0.0.1',
      '2001:db8:1:2::1',
      '2001:db8:1:2::ffff',
      '2001:db8:1:3::1',
    ].entries()) {
      statuses[`${forwardedFor[0]} ${forwardedFor[1]}`] = (await from(forwardedFor[1])).status;
    }
    expect(statuses).toEqual({
      '0 203.0.113.1': 200,
      '1 203.0.113.1': 429,
      '2 198.51.100.7, 203.0.113.1': 429,
      '3 203.0.113.2': 200,
      '4 203.0.113.3, 127.0.0.1': 200,
      '5 2001:db8:1:2::1': 200,
      '6 2001:db8:1:2::ffff': 429,
      '7 2001:db8:1:3::1': 200,
    });
  });

  it('ignore X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_ADDRESS_PER_SECOND: '1', RATE_LIMIT_ADDRESS_BURST: '1' });
    const statuses = [];
    for (const forwardedFor of ['203.0.113.10', '203.0.113.11']) {
      const response = await fetch(gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, 'x-forwarded-for': forwardedFor },
        body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }),
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 429]);
  });

  it('read the client behind a trusted proxy from the WebSocket upgrade request too', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_ADDRESS_PER_SECOND: '1', RATE_LIMIT_ADDRESS_BURST: '1', TRUSTED_PROXIES: '127.0.0.1' });
    const open = (forwardedFor: string) =>
      subscribeWs(gateway.graphqlUrl, 'subscription { bonusCreated { bonus { id } } }', { connectionParams: { 'x-recognition-token': DEMO_TOKENS.readOnly }, upgradeHeaders: { 'x-forwarded-for': forwardedFor } });
    const sameClient = [open('203.0.113.20'), open('203.0.113.20')];
    const other = open('203.0.113.21');
    const refused = () => sameClient.filter((subscription) => subscription.results[0]?.errors?.[0]?.extensions?.code === 'RATE_LIMITED').length;
    try {
      await expect.poll(refused).toBe(1);
      // The others were let through: no result yet, and no end.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(refused()).toBe(1);
      expect(sameClient.map((subscription) => subscription.results.length).sort()).toEqual([0, 1]);
      expect(other.results).toEqual([]);
    } finally {
      for (const subscription of [...sameClient, other]) subscription.close();
    }
  });

  it('count a credential padded with spaces or tabs in connectionParams as the credential itself, as over HTTP', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '1' });
    const codes = [];
    for (const token of [DEMO_TOKENS.member, ` ${DEMO_TOKENS.member}`, `${DEMO_TOKENS.member}\t`]) {
      const outcome = await overWs(gateway.graphqlUrl, { query: '{ hashtagTrends { hashtag } }' }, { 'x-recognition-token': token });
      codes.push(outcome.body?.errors?.[0]?.extensions?.code ?? 'allowed');
    }
    expect(codes).toEqual(['allowed', 'RATE_LIMITED', 'RATE_LIMITED']);
  });

  it('count operations over graphql-ws too', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '1' });
    const subscriptions = Array.from({ length: 4 }, () => subscribeWs(gateway.graphqlUrl, 'subscription { bonusCreated { bonus { id } } }', { connectionParams: { 'x-recognition-token': DEMO_TOKENS.readOnly } }));
    try {
      await expect.poll(() => subscriptions.filter((subscription) => subscription.results[0]?.errors?.[0]?.extensions?.code === 'RATE_LIMITED').length).toBeGreaterThan(0);
    } finally {
      for (const subscription of subscriptions) subscription.close();
    }
  });
});

describe('rate limits with a Redis that never answers', () => {
  it('count in the process after one command timeout, neither hanging nor letting everything through', async () => {
    const silent = await startSilentServer();
    const gateway = await gatewayWith({ RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '3', REDIS_URL: silent.url });
    const started = Date.now();
    const { allowed, refused } = await burstOf(10, () => query(gateway.graphqlUrl, DEMO_TOKENS.member));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(allowed).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(0);
  });
});

describe.skipIf(!requireBinary('redis-server'))('rate limits with REDIS_URL', () => {
  it('are shared by every gateway replica', async () => {
    const redis = await startRedis();
    // Registered in the test, for the test: an afterAll here is never run, and the server outlived the suite.
    onTestFinished(() => redis.close());
    const env = { RATE_LIMIT_CALLER_PER_SECOND: '1', RATE_LIMIT_CALLER_BURST: '3', REDIS_URL: redis.url };
    const replicas = [await gatewayWith(env), await gatewayWith(env)];
    const { allowed, refused } = await burstOf(12, (index) => query(replicas[index % 2]!.graphqlUrl, DEMO_TOKENS.member));
    // One bucket of 3 for both: apart alone they would let 6 through at once.
    expect(allowed).toBeLessThan(6);
    expect(refused.length).toBeGreaterThan(0);
  });
});
