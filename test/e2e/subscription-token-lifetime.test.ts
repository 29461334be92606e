import { describe, expect, it, onTestFinished } from 'vitest';
import type { ExecutionResult } from 'graphql';
import { DEMO_READER } from '../../emulators/authorization-server/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { clientCredentialsToken } from '../support/oauthTokens.ts';
import { emulatorControl, startTestStack } from '../support/stack.ts';
import { subscribeMultipart, subscribeSse, subscribeWs, type Collected, type MultipartCollected } from '../support/subscribers.ts';
import { waitUntil } from '../support/waitFor.ts';

/**
 * QA7 defect 1: a subscription is authenticated when it starts, and must end (UNAUTHENTICATED, over
 * every transport) when its token expires or is revoked, as a request with that token is refused.
 * No clock leeway here, and opaque tokens re-checked each second, so that this takes seconds.
 */
const { stack, graphqlUrl, emulator } = await startTestStack({ GATEWAY_AUTH: 'oauth2', AUTH_CLOCK_SKEW_SECONDS: '0', AUTH_INTROSPECTION_CACHE_SECONDS: '1' });
const authUrl = stack.authorizationServerUrl!;
const authServer = emulatorControl(authUrl);
const stats = () => stack.gateway.subscriptions.stats();

const tokenFor = (client: { clientId: string; clientSecret: string }) => clientCredentialsToken(authUrl, client);

async function clientWith(settings: { format?: 'jwt' | 'opaque'; ttlSeconds?: number }) {
  const client = { clientId: `client-${Math.random().toString(36).slice(2)}`, clientSecret: `secret-${Math.random().toString(36).slice(2)}-0123456789`, scopes: ['recognition:read'], ...settings };
  knownSecrets.add(client.clientSecret);
  await authServer.control('clients', client);
  return client;
}

const QUERY = 'subscription { bonusCreated(filter: { hashtag: "lifetime" }) { bonus { reason } } }';
const giveBonus = (reason: string) => emulator('recognition').control('bonuses', { giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: 'lifetime', reason });
const reasons = (subscriber: Collected) => subscriber.results.map((result) => (result.data?.bonusCreated as { bonus: { reason: string } } | undefined)?.bonus.reason);

/** One subscriber per transport, each with the token and its own recognition credential (the client's principal has none held). */
function subscribeEverywhere(token: string) {
  const headers = { authorization: `Bearer ${token}`, 'x-recognition-token': DEMO_TOKENS.member };
  const subscribers = { 'graphql-ws': subscribeWs(graphqlUrl, QUERY, { connectionParams: headers }), SSE: subscribeSse(graphqlUrl, QUERY, { headers }), multipart: subscribeMultipart(graphqlUrl, QUERY, { headers }) };
  onTestFinished(() => Object.values(subscribers).forEach((subscriber) => subscriber.close()));
  return subscribers;
}

/** Gives bonuses until every subscriber has one: each is live. */
async function live(subscribers: Record<string, Collected>) {
  let round = 0;
  await waitUntil(async () => {
    if (Object.values(subscribers).every((subscriber) => subscriber.results.length > 0)) return true;
    await giveBonus(`warm-up-${(round += 1)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return false;
  }, () => `every subscriber live (${JSON.stringify(Object.values(subscribers).map((subscriber) => subscriber.results.length))})`);
}

/** The error each transport ended the subscription with: graphql-ws's `error` message, SSE's last `next`, multipart's transport error. */
async function endingError(transport: string, subscriber: Collected): Promise<{ message: string; extensions?: { code?: string } }> {
  const failure = await subscriber.ended;
  if (transport === 'graphql-ws') return (failure as { message: string; extensions?: { code?: string } }[])[0]!;
  if (transport === 'multipart') return (subscriber as MultipartCollected).fatal()![0] as { message: string; extensions?: { code?: string } };
  const last = subscriber.results.at(-1) as ExecutionResult;
  return last.errors![0] as unknown as { message: string; extensions?: { code?: string } };
}

/** An event given after the end reaches a subscriber that is still entitled to it, and none of the ended ones. */
async function nothingAfterwards(ended: Record<string, Collected>) {
  const counts = Object.values(ended).map((subscriber) => subscriber.results.length);
  const witness = subscribeWs(graphqlUrl, QUERY, { connectionParams: { authorization: `Bearer ${await tokenFor(DEMO_READER)}` } });
  onTestFinished(() => witness.close());
  await live({ witness });
  await giveBonus('after-the-end');
  await waitUntil(() => reasons(witness).includes('after-the-end'), () => 'the witness to get the last event');
  expect(Object.values(ended).map((subscriber) => subscriber.results.length)).toEqual(counts);
  for (const subscriber of Object.values(ended)) expect(reasons(subscriber)).not.toContain('after-the-end');
}

describe('a live subscription and the token it was made with', () => {
  it('ends on every transport with UNAUTHENTICATED when its JWT expires, and gets nothing after', async () => {
    const token = await tokenFor(await clientWith({ ttlSeconds: 4 }));
    const subscribers = subscribeEverywhere(token);
    await live(subscribers);
    for (const [transport, subscriber] of Object.entries(subscribers)) {
      const error = await endingError(transport, subscriber);
      expect(error, transport).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
      expect(error.message, transport).toMatch(/has expired: subscribe again with a fresh token/);
    }
    await nothingAfterwards(subscribers);
  });

  it('ends on every transport with UNAUTHENTICATED once its opaque token is revoked, with one introspection per period for all its subscriptions', async () => {
    const client = await clientWith({ format: 'opaque' });
    const token = await tokenFor(client);
    const subscribers = subscribeEverywhere(token);
    // More of the same token over one connection's worth: they share the re-checks.
    const more = Array.from({ length: 20 }, () => subscribeSse(graphqlUrl, QUERY, { headers: { authorization: `Bearer ${token}`, 'x-recognition-token': DEMO_TOKENS.member } }));
    onTestFinished(() => more.forEach((subscriber) => subscriber.close()));
    await live({ ...subscribers, ...Object.fromEntries(more.map((subscriber, index) => [`more-${index}`, subscriber])) });

    await authServer.clearRequests();
    const introspections = async () => (await authServer.requests()).filter((request) => request.path === '/oauth2/introspect').length;
    await waitUntil(async () => (await introspections()) >= 3, () => 'three re-checks', 10_000);
    // 23 subscriptions re-checked each alone would make 23 calls a second.
    expect(await introspections()).toBeLessThanOrEqual(4);

    await fetch(`${authUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ token }),
    });
    for (const [transport, subscriber] of Object.entries(subscribers)) {
      const error = await endingError(transport, subscriber);
      expect(error, transport).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
      expect(error.message, transport).toMatch(/no longer valid.*subscribe again with a fresh token/);
    }
    for (const subscriber of more) await subscriber.ended;
    await waitUntil(() => stats().subscribers === 0, () => `every subscription released (${JSON.stringify(stats())})`);
    await nothingAfterwards(subscribers);
  });

  it('goes on while the authorization server cannot answer (503): only a refusal ends it', async () => {
    const token = await tokenFor(await clientWith({ format: 'opaque' }));
    const subscribers = subscribeEverywhere(token);
    await live(subscribers);
    await authServer.fault({ path: '/oauth2/introspect', status: 503 });
    onTestFinished(() => void fetch(`${authUrl}/__emulator/faults`, { method: 'DELETE' }));
    await authServer.clearRequests();
    await waitUntil(async () => (await authServer.requests()).filter((request) => request.path === '/oauth2/introspect' && request.status === 503).length >= 2, () => 'two failed re-checks', 10_000);
    await giveBonus('through-the-outage');
    await waitUntil(() => Object.values(subscribers).every((subscriber) => reasons(subscriber).includes('through-the-outage')), () => 'every subscriber to get the event given during the outage');
    for (const subscriber of Object.values(subscribers)) expect(subscriber.results.every((result) => !result.errors)).toBe(true);
  });
});
