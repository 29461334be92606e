import { describe, expect, it, onTestFinished } from 'vitest';
import { Redis } from 'ioredis';
import { DEMO_AUDIENCE } from '../../emulators/authorization-server/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { createCredentialStore, CredentialsUnavailable } from '../../gateway/auth/serviceCredentials.ts';
import { requireBinary } from '../support/binaries.ts';
import { knownSecrets } from '../support/logs.ts';
import { startRedis } from '../support/redisServer.ts';
import { startTcpRelay } from '../support/tcpRelay.ts';
import { emulatorControl, startGatewayOver, startTestStack } from '../support/stack.ts';

const PREFIX = 'graph:principal-credentials:';

const { stack } = await startTestStack({ GATEWAY_AUTH: 'oauth2' });

describe.skipIf(!requireBinary('redis-server'))('service credentials held in Redis for OAuth 2.0 principals', () => {
  async function setUp() {
    const redis = await startRedis();
    onTestFinished(() => redis.close());
    const relay = await startTcpRelay(redis.url);
    onTestFinished(() => relay.close());
    const admin = new Redis(redis.url);
    onTestFinished(() => void admin.disconnect());
    return { redis, relay, admin };
  }

  it('answer 503 UPSTREAM_UNAVAILABLE while Redis is down, never "send the header", and serve the principal as soon as Redis is back', async () => {
    const { relay, admin } = await setUp();
    const authUrl = stack.authorizationServerUrl!;
    const gateway = await startGatewayOver(stack, { GATEWAY_AUTH: 'oauth2', AUTH_ISSUER: authUrl, AUTH_JWKS_URL: `${authUrl}/.well-known/jwks.json`, AUTH_AUDIENCE: DEMO_AUDIENCE, REDIS_URL: relay.url }, 'credentials-redis-gateway');
    const recognition = emulatorControl(stack.services.find((service) => service.name === 'recognition')!.emulatorUrl!);

    async function partner() {
      const client = { clientId: `partner-${Math.random().toString(36).slice(2)}`, clientSecret: `secret-${Math.random().toString(36).slice(2)}-0123456789`, scopes: ['recognition:read'] };
      knownSecrets.add(client.clientSecret);
      await emulatorControl(authUrl).control('clients', client);
      await admin.hset(`${PREFIX}${client.clientId}`, 'x-recognition-token', DEMO_TOKENS.member);
      const response = await fetch(`${authUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      });
      const { access_token: token } = (await response.json()) as { access_token: string };
      knownSecrets.add(token);
      return token;
    }
    async function ask(token: string) {
      const response = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }) });
      return { status: response.status, wwwAuthenticate: response.headers.get('www-authenticate'), body: (await response.json()) as { data?: { hashtagTrends?: unknown[] } | null; errors?: { message: string; extensions?: { code?: string } }[] } };
    }

    const token = await partner();
    relay.set('refuse');
    await recognition.clearRequests();
    const during = await ask(token);
    expect(during.status).toBe(503);
    expect(during.wwwAuthenticate).toContain('error="temporarily_unavailable"');
    expect(during.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(during.body.errors?.[0]?.message).not.toContain('x-recognition-token');
    expect(await recognition.requests()).toEqual([]);

    // Redis back: the failed read was not remembered, so the next request is served (not 30 s later).
    relay.set('pass');
    const started = Date.now();
    await expect.poll(async () => (await ask(token)).status, { timeout: 8000, interval: 100 }).toBe(200);
    expect(Date.now() - started).toBeLessThan(8000);
    const after = await ask(token);
    expect(after.body.errors).toBeUndefined();
    expect(after.body.data?.hashtagTrends?.length).toBeGreaterThan(0);

    // A Redis that accepts the connection and never answers: 503 after the read's timeout, not a hang.
    const other = await partner();
    relay.set('ignore');
    const asked = Date.now();
    const silent = await ask(other);
    expect(Date.now() - asked).toBeLessThan(3000);
    expect(silent.status).toBe(503);
    expect(silent.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
  });

  it('keep using the last values read, within a bound, while Redis fails, and never remember a failure', async () => {
    const { relay, admin } = await setUp();
    await admin.hset(`${PREFIX}known`, 'x-recognition-token', DEMO_TOKENS.member, 'x-not-a-credential', 'ignored');
    await admin.hset(`${PREFIX}newcomer`, 'x-dashboards-token', 'dash-token-0123456789');
    knownSecrets.add('dash-token-0123456789');
    const failures: Error[] = [];
    const store = createCredentialStore({ redisUrl: relay.url, cacheMs: 50, staleMs: 1500, onReadFailure: (error) => failures.push(error) });
    onTestFinished(() => store.close());

    expect(await store.credentialsFor('known')).toEqual({ 'x-recognition-token': DEMO_TOKENS.member });
    relay.set('refuse');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Its cached answer has run out: the last good one stands in while Redis fails.
    expect(await store.credentialsFor('known')).toEqual({ 'x-recognition-token': DEMO_TOKENS.member });
    // Nothing held: a typed failure, not "no credentials".
    await expect(store.credentialsFor('newcomer')).rejects.toBeInstanceOf(CredentialsUnavailable);
    await expect(store.credentialsFor('newcomer')).rejects.toBeInstanceOf(CredentialsUnavailable);
    expect(failures.length).toBeGreaterThan(0);
    // Past the bound the last good value is not used any more.
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await expect(store.credentialsFor('known')).rejects.toBeInstanceOf(CredentialsUnavailable);

    relay.set('pass');
    await expect.poll(() => store.credentialsFor('newcomer').catch(() => 'failed'), { timeout: 8000, interval: 100 }).toEqual({ 'x-dashboards-token': 'dash-token-0123456789' });
    expect(await store.credentialsFor('known')).toEqual({ 'x-recognition-token': DEMO_TOKENS.member });
  });

  it('give up on a silent Redis after the read timeout, however many requests wait on it', async () => {
    const { relay, admin } = await setUp();
    await admin.hset(`${PREFIX}someone`, 'x-recognition-token', DEMO_TOKENS.member);
    const store = createCredentialStore({ redisUrl: relay.url });
    onTestFinished(() => store.close());
    relay.set('ignore');
    const started = Date.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => store.credentialsFor('someone')));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(outcomes.every((outcome) => outcome.status === 'rejected' && outcome.reason instanceof CredentialsUnavailable)).toBe(true);
  });
});
