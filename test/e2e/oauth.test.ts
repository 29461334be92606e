import { describe, expect, it, onTestFinished } from 'vitest';
import { SignJWT, generateKeyPair, decodeProtectedHeader } from 'jose';
import { DEMO_PARTNER, DEMO_READER, GRAPH_CLIENT } from '../../emulators/authorization-server/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { knownSecrets, testLogger } from '../support/logs.ts';
import { emulatorControl, startTestStack } from '../support/stack.ts';
import { subscribeWs } from '../support/subscribers.ts';

for (const secret of [DEMO_PARTNER.clientSecret, DEMO_READER.clientSecret, GRAPH_CLIENT.clientSecret]) knownSecrets.add(secret);

const { stack, graphqlUrl, emulator } = await startTestStack({ GATEWAY_AUTH: 'oauth2', AUTH_JWKS_COOLDOWN_SECONDS: '0', AUTH_INTROSPECTION_CACHE_SECONDS: '0' });
const authUrl = stack.authorizationServerUrl!;
const authServer = emulatorControl(authUrl);

async function tokenFor(client: { clientId: string; clientSecret: string }, scope?: string): Promise<string> {
  const response = await fetch(`${authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
  });
  expect(response.status).toBe(200);
  const { access_token: token } = (await response.json()) as { access_token: string };
  knownSecrets.add(token);
  return token;
}

async function clientWith(settings: { scopes: string[]; format?: 'jwt' | 'opaque'; audience?: string; ttlSeconds?: number }) {
  const client = { clientId: `client-${Math.random().toString(36).slice(2)}`, clientSecret: `secret-${Math.random().toString(36).slice(2)}-0123456789`, ...settings };
  knownSecrets.add(client.clientSecret);
  await authServer.control('clients', client);
  return client;
}

async function post(query: string, headers: Record<string, string>, url = graphqlUrl) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });
  return { status: response.status, wwwAuthenticate: response.headers.get('www-authenticate'), body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[] } };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the graph signed in with OAuth 2.0', () => {
  it('refuses a request without a token with 401, WWW-Authenticate: Bearer, and UNAUTHENTICATED', async () => {
    const { status, wwwAuthenticate, body } = await post('{ hashtagTrends { hashtag } }', {});
    expect(status).toBe(401);
    expect(wwwAuthenticate).toMatch(/^Bearer\b/);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('serves a client credentials token with no service headers: the graph injects the partner\'s service credentials', async () => {
    const recognition = emulator('recognition');
    const dashboards = emulator('dashboards');
    await recognition.clearRequests();
    await dashboards.clearRequests();
    const token = await tokenFor(DEMO_PARTNER);
    const { status, body } = await post('{ hashtagTrends { hashtag } dashboardStats { quotaRemaining } }', bearer(token));
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect((body.data!.hashtagTrends as unknown[]).length).toBeGreaterThan(0);
    expect(body.data!.dashboardStats).toBeTruthy();
    expect((await recognition.requests()).length).toBeGreaterThan(0);
    expect((await dashboards.requests()).length).toBeGreaterThan(0);
  });

  it('gives a token without a write scope FORBIDDEN on a mutation, asks no subgraph for it, and its reads still succeed', async () => {
    const recognition = emulator('recognition');
    await recognition.clearRequests();
    const token = await tokenFor(DEMO_READER);
    const write = await post('mutation { createWebhook(input: {url: "https://hooks.example/x"}) { id } }', bearer(token));
    expect(write.body.data).toEqual({ createWebhook: null });
    expect(write.body.errors).toMatchObject([{ path: ['createWebhook'], extensions: { code: 'FORBIDDEN', field: 'Mutation.createWebhook' } }]);
    expect(await recognition.requests()).toEqual([]);

    const read = await post('{ hashtagTrends { hashtag } }', bearer(token));
    expect(read.body.errors).toBeUndefined();
    expect((read.body.data!.hashtagTrends as unknown[]).length).toBeGreaterThan(0);
  });

  it('answers the fields a token may see and nulls the rest, each with an error naming the field, on the fast path too', async () => {
    const client = await clientWith({ scopes: ['recognition:read'] });
    const token = await tokenFor(client);
    const dashboards = emulator('dashboards');
    await dashboards.clearRequests();
    const query = '{ hashtagTrends { hashtag } dashboardStats { quotaRemaining } }';
    // A caller who sees everything makes the operation a remembered fast-path repeat first.
    const partner = await tokenFor(DEMO_PARTNER);
    await post(query, bearer(partner));
    await post(query, bearer(partner));
    await dashboards.clearRequests();
    for (let round = 0; round < 2; round += 1) {
      // A partner with no credentials held by the graph sends its own service header beside the token.
      const { body } = await post(query, { ...bearer(token), 'x-recognition-token': DEMO_TOKENS.member });
      expect((body.data!.hashtagTrends as unknown[]).length).toBeGreaterThan(0);
      expect(body.data!.dashboardStats).toBeNull();
      expect(body.errors).toMatchObject([{ path: ['dashboardStats'], extensions: { code: 'FORBIDDEN', field: 'Query.dashboardStats' } }]);
    }
    expect(await dashboards.requests()).toEqual([]);
  });

  it('refuses an expired, a forged, a wrong-audience and a revoked token', async () => {
    const expired = await tokenFor(await clientWith({ scopes: ['recognition:read'], ttlSeconds: -120 }));
    const otherAudience = await tokenFor(await clientWith({ scopes: ['recognition:read'], audience: 'another-api' }));
    const genuine = await tokenFor(DEMO_READER);
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ scope: 'recognition:read recognition:write', client_id: DEMO_PARTNER.clientId })
      .setProtectedHeader({ alg: 'RS256', kid: decodeProtectedHeader(genuine).kid! })
      .setIssuer(authUrl)
      .setAudience('rest-graph')
      .setSubject(DEMO_PARTNER.clientId)
      .setExpirationTime('10m')
      .sign(privateKey);
    knownSecrets.add(forged);
    const opaqueClient = await clientWith({ scopes: ['recognition:read'], format: 'opaque' });
    const opaque = await tokenFor(opaqueClient);
    expect((await post('{ hashtagTrends { hashtag } }', bearer(opaque))).status).toBe(200);
    await fetch(`${authUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${opaqueClient.clientId}:${opaqueClient.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ token: opaque }),
    });

    for (const token of [expired, forged, otherAudience, opaque, 'not-a-token']) {
      const { status, wwwAuthenticate, body } = await post('{ hashtagTrends { hashtag } }', bearer(token));
      expect(status).toBe(401);
      expect(wwwAuthenticate).toContain('error="invalid_token"');
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(JSON.stringify(body)).not.toContain(token);
    }
  });

  it('follows the authorization server\'s key rotation by kid', async () => {
    await authServer.control('rotate-keys', { dropOld: true });
    const token = await tokenFor(DEMO_READER);
    expect((await post('{ hashtagTrends { hashtag } }', bearer(token))).status).toBe(200);
  });

  it('answers 503 UPSTREAM_UNAVAILABLE, not 401, to a good JWT while the key set answers 5xx, an HTML page or a redirect', async () => {
    // A new kid makes the gateway read the key set again, as a stale cache would.
    await authServer.control('rotate-keys', {});
    const token = await tokenFor(DEMO_READER);
    const jwks = '/.well-known/jwks.json';
    const html = '<html><body>Down for maintenance</body></html>';
    for (const fault of [
      { path: jwks, status: 500, body: { error: 'server_error' } },
      { path: jwks, status: 503, raw: html, contentType: 'text/html' },
      { path: jwks, status: 200, raw: html, contentType: 'text/html' },
      { path: jwks, status: 302, raw: '' },
      { path: jwks, status: 200, body: { keys: 'none' } },
    ]) {
      await authServer.fault({ ...fault, times: 1 });
      const { status, wwwAuthenticate, body } = await post('{ hashtagTrends { hashtag } }', bearer(token));
      expect(status, JSON.stringify(fault)).toBe(503);
      expect(wwwAuthenticate).toContain('error="temporarily_unavailable"');
      expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    }
    // Once the set answers, the same token is served; a token that is really bad is still 401.
    expect((await post('{ hashtagTrends { hashtag } }', bearer(token))).status).toBe(200);
    const [header, payload] = token.split('.');
    const tampered = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
    knownSecrets.add(tampered);
    const refused = await post('{ hashtagTrends { hashtag } }', bearer(tampered));
    expect(refused.status).toBe(401);
    expect(refused.wwwAuthenticate).toContain('error="invalid_token"');
  });

  it('honours a revoked JWT until its exp (validated locally, as AUTH.md says), while a revoked opaque token is refused', async () => {
    const client = await clientWith({ scopes: ['recognition:read'], ttlSeconds: 300 });
    const token = await tokenFor(client);
    await fetch(`${authUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ token }),
    });
    const introspection = await fetch(`${authUrl}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${GRAPH_CLIENT.clientId}:${GRAPH_CLIENT.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ token }),
    });
    expect(await introspection.json()).toEqual({ active: false });
    // The graph never asks about a JWT: its signature and claims are the whole check.
    expect((await post('{ hashtagTrends { hashtag } }', bearer(token))).status).toBe(200);
  });

  it('never takes a token signed by nobody, even one naming an issued token\'s jti: the demo server knows tokens by their whole value', async () => {
    const token = await tokenFor(DEMO_READER);
    const [, payload] = token.split('.');
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    knownSecrets.add(unsigned);
    const introspection = await fetch(`${authUrl}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${GRAPH_CLIENT.clientId}:${GRAPH_CLIENT.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ token: unsigned }),
    });
    expect(await introspection.json()).toEqual({ active: false });
    const refused = await post('{ hashtagTrends { hashtag } }', bearer(unsigned));
    expect(refused.status).toBe(401);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('serves subscriptions to a token, and refuses them without one', async () => {
    const token = await tokenFor(DEMO_READER);
    const subscription = subscribeWs(graphqlUrl, 'subscription { bonusCreated { bonus { hashtag } } }', { connectionParams: bearer(token) });
    const refused = subscribeWs(graphqlUrl, 'subscription { bonusCreated { bonus { hashtag } } }', { connectionParams: {} });
    try {
      const [denied] = await refused.waitFor(1);
      expect(denied!.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      await expect.poll(async () => {
        await emulator('recognition').control('bonuses', { hashtag: '#oauth' });
        return subscription.results.length;
      }).toBeGreaterThan(0);
      expect(subscription.results[0]!.data).toMatchObject({ bonusCreated: { bonus: { hashtag: '#oauth' } } });
    } finally {
      subscription.close();
      refused.close();
    }
  });

  it('publishes where to get a token (RFC 9728) for the explorer, and the token endpoint answers CORS preflight', async () => {
    const metadata = (await (await fetch(graphqlUrl.replace('/graphql', '/.well-known/oauth-protected-resource'))).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ authorization_servers: [authUrl], token_endpoint: `${authUrl}/oauth2/token`, bearer_methods_supported: ['header'] });
    expect(metadata.scopes_supported).toContain('recognition:write');
    const preflight = await fetch(`${authUrl}/oauth2/token`, { method: 'OPTIONS', headers: { origin: 'https://studio.apollographql.com', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    // Sandbox's page itself needs no token.
    expect((await fetch(graphqlUrl, { headers: { accept: 'text/html' } })).status).toBe(200);
  });
});

describe('behind an API gateway that validates OAuth 2.0 itself', () => {
  const subgraphUrls = Object.fromEntries(stack.services.map((service) => [service.name, service.subgraphUrl]));
  const behind = async (trusted: string) =>
    startGateway(
      { ...readGatewayConfig({ GATEWAY_AUTH: 'oauth2', TRUSTED_PROXIES: trusted }, { port: 0, subgraphUrls }), auth: { ...readGatewayConfig({ GATEWAY_AUTH: 'oauth2', TRUSTED_PROXIES: trusted }).auth, principalCredentials: { [DEMO_READER.clientId]: stack.demoHeaders } } },
      testLogger('gateway-behind-proxy'),
    );
  const consumer = { 'x-consumer-username': DEMO_READER.clientId, 'x-consumer-id': 'c0ffee', 'x-authenticated-scope': 'recognition:read', 'x-authenticated-userid': 'user-42' };

  it('trusts the consumer headers from a configured proxy address', async () => {
    const gateway = await behind('127.0.0.1/32');
    onTestFinished(() => gateway.close());
    const { status, body } = await post('{ hashtagTrends { hashtag } dashboardStats { quotaRemaining } }', consumer, gateway.graphqlUrl);
    expect(status).toBe(200);
    expect((body.data!.hashtagTrends as unknown[]).length).toBeGreaterThan(0);
    expect(body.errors).toMatchObject([{ path: ['dashboardStats'], extensions: { code: 'FORBIDDEN' } }]);
  });

  it('ignores them from any other address', async () => {
    const gateway = await behind('10.20.30.40');
    onTestFinished(() => gateway.close());
    const { status, body } = await post('{ hashtagTrends { hashtag } }', consumer, gateway.graphqlUrl);
    expect(status).toBe(401);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
