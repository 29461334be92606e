import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ADMIN_TOKEN } from '../../emulators/gatewayAdmin/data.ts';
import { DEMO_TOKEN as DASHBOARDS_DEMO_TOKEN } from '../../emulators/dashboards/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';

const PROXY_URL = 'https://gateway.example';
const t = await startTestStack({ GATEWAY_ADMIN_PROXY_URL: PROXY_URL });
const emulator = t.emulator('gatewayAdmin');
const dashboards = t.emulator('dashboards');
const admin = { 'x-gateway-admin-token': DEMO_ADMIN_TOKEN };

beforeEach(async () => {
  await emulator.reset();
  await dashboards.reset();
});

const gql = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = admin) => t.gql<T>(query, { headers, variables });
const firstError = (result: GraphQLResult<unknown>) => result.errors?.[0];
const calls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}`);

const REGISTER = 'mutation ($input: RegisterApiInput!) { registerApi(input: $input) { id name uris upstreamUrl createdAt } }';
const CONSUMER = 'mutation ($input: CreateConsumerInput!) { createConsumer(input: $input) { id username } }';
const APPLICATION = 'mutation ($input: CreateOAuthApplicationInput!) { createOAuthApplication(input: $input) { clientSecret application { id name clientId redirectUris consumerId } } }';
const ENABLE =
  'mutation ($input: EnableOAuth2Input!) { enableOAuth2(input: $input) { provisionKey plugin { id apiId enabled grants scopes mandatoryScope tokenExpiration acceptHttpIfAlreadyTerminated } } }';
const SETTINGS =
  'query ($api: String!, $consumer: String!, $application: String) { explorerSettings(api: $api, consumer: $consumer, application: $application) { api { name } grantType grants oauthHost tokenPath authorizePath clientId scopes mandatoryScope } }';

const CALLBACK = 'https://portal.example/oauth/callback';

interface Secured {
  clientId: string;
  clientSecret: string;
  provisionKey: string | null;
}

/** The guide's operator steps, through the gateway: an API, a partner, the partner's explorer application, the plugin. */
async function secureApi(grant: string, { acceptHttp = true, scopes = ['read', 'write'], mandatoryScope = false } = {}): Promise<Secured> {
  const api = await gql(REGISTER, { input: { name: 'billing', uris: ['/billing'], upstreamUrl: 'https://billing.internal.example' } });
  expect(api.errors).toBeUndefined();
  const consumer = await gql(CONSUMER, { input: { username: 'partner-portal' } });
  expect(consumer.errors).toBeUndefined();
  const application = await gql<{ createOAuthApplication: { clientSecret: string; application: { clientId: string } } }>(APPLICATION, {
    input: { consumer: 'partner-portal', name: 'explorer', redirectUri: CALLBACK },
  });
  expect(application.errors).toBeUndefined();
  const enabled = await gql<{ enableOAuth2: { provisionKey: string | null } }>(ENABLE, {
    input: { api: 'billing', grant, scopes, mandatoryScope, acceptHttpIfAlreadyTerminated: acceptHttp },
  });
  expect(enabled.errors).toBeUndefined();
  const secured = {
    clientId: application.data!.createOAuthApplication.application.clientId,
    clientSecret: application.data!.createOAuthApplication.clientSecret,
    provisionKey: enabled.data!.enableOAuth2.provisionKey,
  };
  knownSecrets.add(secured.clientSecret);
  if (secured.provisionKey) knownSecrets.add(secured.provisionKey);
  return secured;
}

interface TokenAnswer {
  status: number;
  headers: Headers;
  body: Record<string, string | number | undefined>;
}

/** A call of the plugin's proxy-side endpoint, as an explorer makes it (TLS terminated in front, unless told otherwise). */
async function plugin(path: string, params: Record<string, string>, { https = true, headers = {} }: { https?: boolean; headers?: Record<string, string> } = {}): Promise<TokenAnswer> {
  const response = await fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(https ? { 'x-forwarded-proto': 'https' } : {}), ...headers },
    body: new URLSearchParams(params),
  });
  const body = (await response.json()) as TokenAnswer['body'];
  for (const name of ['access_token', 'refresh_token']) if (typeof body[name] === 'string') knownSecrets.add(body[name] as string);
  return { status: response.status, headers: response.headers, body };
}

const introspect = async (token: string) =>
  (await fetch(`${emulator.url}/__emulator/introspect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })).json() as Promise<Record<string, unknown>>;

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('gatewayAdmin: the guide, end to end', () => {
  it('client credentials: register, consumer, application, plugin; the explorer settings; a token from the returned client id and secret', async () => {
    const { clientId, clientSecret, provisionKey } = await secureApi('CLIENT_CREDENTIALS');
    expect(clientId).toMatch(/^[0-9a-f]{32}$/);
    expect(clientSecret).toMatch(/^[0-9a-f]{32}$/);
    // Client credentials needs no provision key.
    expect(provisionKey).toBeNull();
    // Form-encoded bodies to the admin interface, in the spec's paths; the admin token never travels upstream.
    const log = await emulator.requests();
    expect(log.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /apis', 'POST /consumers', 'POST /consumers/partner-portal/oauth2/', 'POST /apis/billing/plugins/']);
    for (const request of log) {
      expect(request.headers).toContain('content-type');
      expect(request.headers).not.toContain('x-gateway-admin-token');
    }

    await emulator.clearRequests();
    const settings = await gql(SETTINGS, { api: 'billing', consumer: 'partner-portal' });
    expect(settings).toEqual({
      data: {
        explorerSettings: {
          api: { name: 'billing' },
          grantType: 'CLIENT_CREDENTIALS',
          grants: ['CLIENT_CREDENTIALS'],
          oauthHost: PROXY_URL,
          tokenPath: '/billing/oauth2/token',
          authorizePath: null,
          clientId,
          scopes: ['read', 'write'],
          mandatoryScope: false,
        },
      },
    });
    expect((await calls()).sort()).toEqual(['GET /apis/billing', 'GET /apis/billing/plugins/', 'GET /consumers/partner-portal/oauth2/']);
    expect(JSON.stringify(settings)).not.toContain(clientSecret);

    const token = await plugin('/billing/oauth2/token', { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read' });
    expect(token.status).toBe(200);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(token.body).toEqual({ access_token: expect.stringMatching(/^[0-9a-f]{32}$/), token_type: 'bearer', expires_in: 7200 });
    expect(await introspect(String(token.body.access_token))).toMatchObject({ active: true, scope: 'read', client_id: clientId, token_type: 'bearer', aud: 'billing' });

    // The client may authenticate with HTTP Basic instead.
    const byBasic = await plugin('/billing/oauth2/token', { grant_type: 'client_credentials' }, { headers: { authorization: basic(clientId, clientSecret) } });
    expect(byBasic.status).toBe(200);
    expect(byBasic.body.refresh_token).toBeUndefined();

    // A token lives 7200 s on the emulator's clock.
    await emulator.control('clock', { advanceMs: 7_200_001 });
    expect(await introspect(String(token.body.access_token))).toEqual({ active: false });
  });

  it('authorization code: authorize with the provision key, exchange the code once, refresh with rotation; a code lives 300 s', async () => {
    const { clientId, clientSecret, provisionKey } = await secureApi('AUTHORIZATION_CODE');
    expect(provisionKey).toMatch(/^[0-9a-f]{32}$/);
    const settings = await gql<{ explorerSettings: Record<string, unknown> }>(SETTINGS, { api: 'billing', consumer: 'partner-portal', application: 'explorer' });
    expect(settings.data!.explorerSettings).toMatchObject({ grantType: 'AUTHORIZATION_CODE', tokenPath: '/billing/oauth2/token', authorizePath: '/billing/oauth2/authorize', clientId });

    const authorize = () =>
      plugin('/billing/oauth2/authorize', { client_id: clientId, response_type: 'code', provision_key: provisionKey!, authenticated_userid: 'user-42', scope: 'read write', state: 'xyz' });
    const authorized = await authorize();
    expect(authorized.status).toBe(200);
    const redirect = new URL(String(authorized.body.redirect_uri));
    expect(`${redirect.origin}${redirect.pathname}`).toBe(CALLBACK);
    expect(redirect.searchParams.get('state')).toBe('xyz');
    const code = redirect.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f]{32}$/);

    const exchange = (value: string) => plugin('/billing/oauth2/token', { grant_type: 'authorization_code', code: value, client_id: clientId, client_secret: clientSecret, redirect_uri: CALLBACK });
    const token = await exchange(code);
    expect(token.status).toBe(200);
    expect(token.body).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 7200, refresh_token: expect.any(String) });
    expect(await introspect(String(token.body.access_token))).toMatchObject({ active: true, sub: 'user-42', scope: 'read write' });

    // A code is used once.
    const reused = await exchange(code);
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: 'Invalid code' } });

    // Refresh rotates: a new pair, the old refresh token and access token are gone.
    const refreshed = await plugin('/billing/oauth2/token', { grant_type: 'refresh_token', refresh_token: String(token.body.refresh_token), client_id: clientId, client_secret: clientSecret });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(token.body.refresh_token);
    expect(await introspect(String(token.body.access_token))).toEqual({ active: false });
    const again = await plugin('/billing/oauth2/token', { grant_type: 'refresh_token', refresh_token: String(token.body.refresh_token), client_id: clientId, client_secret: clientSecret });
    expect(again.body).toMatchObject({ error: 'invalid_request', error_description: 'Invalid refresh_token' });

    // A code not exchanged within 300 s is refused.
    const late = new URL(String((await authorize()).body.redirect_uri)).searchParams.get('code')!;
    await emulator.control('clock', { advanceMs: 300_001 });
    expect((await exchange(late)).body).toMatchObject({ error: 'invalid_request', error_description: 'Invalid code' });
  });

  it('implicit: the authorize endpoint puts the token in the redirect fragment, with no refresh token', async () => {
    const { clientId, provisionKey } = await secureApi('IMPLICIT');
    expect((await gql<{ explorerSettings: Record<string, unknown> }>(SETTINGS, { api: 'billing', consumer: 'partner-portal' })).data!.explorerSettings).toMatchObject({
      grantType: 'IMPLICIT',
      authorizePath: '/billing/oauth2/authorize',
    });
    const answer = await plugin('/billing/oauth2/authorize', { client_id: clientId, response_type: 'token', provision_key: provisionKey!, authenticated_userid: 'user-7' });
    const fragment = new URLSearchParams(new URL(String(answer.body.redirect_uri)).hash.slice(1));
    knownSecrets.add(fragment.get('access_token')!);
    expect(fragment.get('token_type')).toBe('bearer');
    expect(fragment.get('expires_in')).toBe('7200');
    expect(fragment.has('refresh_token')).toBe(false);
    // The code flow is not switched on.
    expect((await plugin('/billing/oauth2/authorize', { client_id: clientId, response_type: 'code', provision_key: provisionKey!, authenticated_userid: 'user-7' })).status).toBe(400);
  });

  it('password: the provision key and the authenticated user id are required; the answer has a refresh token', async () => {
    const { clientId, clientSecret, provisionKey } = await secureApi('PASSWORD');
    expect((await gql<{ explorerSettings: Record<string, unknown> }>(SETTINGS, { api: 'billing', consumer: 'partner-portal' })).data!.explorerSettings).toMatchObject({
      grantType: 'PASSWORD',
      tokenPath: '/billing/oauth2/token',
      authorizePath: null,
    });
    const ask = (extra: Record<string, string>) => plugin('/billing/oauth2/token', { grant_type: 'password', client_id: clientId, client_secret: clientSecret, ...extra });
    expect((await ask({ provision_key: 'wrong', authenticated_userid: 'u' })).body).toMatchObject({ error: 'invalid_provision_key' });
    expect((await ask({ provision_key: provisionKey! })).body).toMatchObject({ error: 'invalid_authenticated_userid' });
    const token = await ask({ provision_key: provisionKey!, authenticated_userid: 'user-9' });
    expect(token.body).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 7200, refresh_token: expect.any(String) });
  });
});

describe('gatewayAdmin: the token endpoint refuses as the real plugin does', () => {
  it('plain HTTP, a wrong client, Basic, an unknown grant, a bad or missing scope; and it answers CORS preflight', async () => {
    const { clientId, clientSecret } = await secureApi('CLIENT_CREDENTIALS', { mandatoryScope: true });
    const good = { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read' };

    expect(await plugin('/billing/oauth2/token', good, { https: false })).toMatchObject({ status: 400, body: { error: 'access_denied', error_description: 'You must use HTTPS' } });

    const wrongSecret = await plugin('/billing/oauth2/token', { ...good, client_secret: 'not-the-secret' });
    expect(wrongSecret).toMatchObject({ status: 400, body: { error: 'invalid_client', error_description: 'Invalid client authentication' } });
    expect(wrongSecret.headers.get('www-authenticate')).toBeNull();
    const byBasic = await plugin('/billing/oauth2/token', { grant_type: 'client_credentials', scope: 'read' }, { headers: { authorization: basic(clientId, 'not-the-secret') } });
    expect(byBasic).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(byBasic.headers.get('www-authenticate')).toBe('Basic realm="OAuth2.0"');

    expect((await plugin('/billing/oauth2/token', { ...good, grant_type: 'password' })).body).toEqual({ error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
    expect((await plugin('/billing/oauth2/token', { ...good, scope: 'admin' })).body).toEqual({ error: 'invalid_scope', error_description: '"admin" is an invalid scope' });
    const { scope: _scope, ...withoutScope } = good;
    expect((await plugin('/billing/oauth2/token', withoutScope)).body).toEqual({ error: 'invalid_scope', error_description: 'You must specify a scope' });
    expect((await plugin('/billing/oauth2/token', { ...good, redirect_uri: 'https://elsewhere.example/' })).body).toMatchObject({ error: 'invalid_request' });
    expect((await plugin('/elsewhere/oauth2/token', good)).status).toBe(404);

    const preflight = await fetch(`${emulator.url}/billing/oauth2/token`, {
      method: 'OPTIONS',
      headers: { origin: 'https://studio.apollographql.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
  });

  it('the authorize endpoint: a wrong provision key, no user, an unknown client, an unregistered redirect URI, two X-Forwarded-Proto', async () => {
    const { clientId, provisionKey } = await secureApi('AUTHORIZATION_CODE');
    const good = { client_id: clientId, response_type: 'code', provision_key: provisionKey!, authenticated_userid: 'user-1' };
    expect(await plugin('/billing/oauth2/authorize', { ...good, provision_key: 'wrong' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_provision_key', error_description: 'Invalid provision_key' },
    });
    expect((await plugin('/billing/oauth2/authorize', { ...good, authenticated_userid: ' ' })).body).toMatchObject({ error: 'invalid_authenticated_userid' });
    expect(await plugin('/billing/oauth2/authorize', { ...good, client_id: 'nobody' })).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    expect((await plugin('/billing/oauth2/authorize', { ...good, response_type: 'token' })).body.redirect_uri).toContain('error=unsupported_response_type');
    // An unregistered redirect URI: the error goes to the first registered one, as the real plugin does.
    const elsewhere = await plugin('/billing/oauth2/authorize', { ...good, redirect_uri: 'https://attacker.example/' });
    expect(elsewhere.status).toBe(400);
    const redirect = new URL(String(elsewhere.body.redirect_uri));
    expect(`${redirect.origin}${redirect.pathname}`).toBe(CALLBACK);
    expect(redirect.searchParams.get('error')).toBe('invalid_request');
    expect(redirect.searchParams.has('code')).toBe(false);
    expect((await plugin('/billing/oauth2/authorize', good, { https: false, headers: { 'x-forwarded-proto': 'https, http' } })).body).toEqual({
      error: 'access_denied',
      error_description: 'Only one X-Forwarded-Proto header allowed',
    });
  });

  it('refuses plain HTTP whatever the request says when the plugin does not accept HTTP terminated in front', async () => {
    const { clientId, clientSecret } = await secureApi('CLIENT_CREDENTIALS', { acceptHttp: false });
    const answer = await plugin('/billing/oauth2/token', { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    expect(answer).toMatchObject({ status: 400, body: { error: 'access_denied', error_description: 'You must use HTTPS' } });
  });
});

describe('gatewayAdmin: administration needs an administrator', () => {
  const everyField = [
    [REGISTER, { input: { name: 'billing', uris: ['/billing'], upstreamUrl: 'https://billing.internal.example' } }],
    [CONSUMER, { input: { username: 'partner' } }],
    [APPLICATION, { input: { consumer: 'partner', name: 'explorer', redirectUri: CALLBACK } }],
    [ENABLE, { input: { api: 'billing', grant: 'CLIENT_CREDENTIALS' } }],
    [SETTINGS, { api: 'billing', consumer: 'partner' }],
  ] as const;

  it('without the admin token, or with a wrong one, every field is FORBIDDEN and nothing reaches the admin interface', async () => {
    const callers: Record<string, string>[] = [{}, { 'x-gateway-admin-token': 'not-the-admin-token-0000000000' }, { 'x-gateway-admin-token': '' }, { authorization: `Bearer ${DEMO_ADMIN_TOKEN}` }];
    for (const headers of callers) {
      for (const [query, variables] of everyField) {
        const result = await gql(query, variables, headers);
        expect(firstError(result)?.extensions, query).toMatchObject({ code: 'FORBIDDEN', service: 'gatewayAdmin' });
        expect(firstError(result)?.message).not.toContain(DEMO_ADMIN_TOKEN);
      }
    }
    expect(await emulator.requests()).toEqual([]);
  });

  it('the admin token goes to the gatewayAdmin subgraph only', async () => {
    const result = await gql('{ dashboards(first: 1) { totalCount } }', undefined, { ...admin, 'x-dashboards-token': DASHBOARDS_DEMO_TOKEN });
    expect(result.errors).toBeUndefined();
    const [call] = await dashboards.requests();
    expect(call!.headers).not.toContain('x-gateway-admin-token');
  });
});

describe('gatewayAdmin: every failure of the admin interface, typed', () => {
  it('checks its own bounds before any call', async () => {
    const refused: [string, Record<string, unknown>, string][] = [
      [REGISTER, { input: { name: 'billing', uris: [], upstreamUrl: 'https://x.example' } }, 'input.uris'],
      [REGISTER, { input: { name: 'billing', uris: Array.from({ length: 17 }, (_, i) => `/u${i}`), upstreamUrl: 'https://x.example' } }, 'input.uris'],
      [REGISTER, { input: { name: 'billing', uris: ['/billing'], upstreamUrl: 'ftp://x.example' } }, 'input.upstreamUrl'],
      [REGISTER, { input: { name: 'x'.repeat(129), uris: ['/billing'], upstreamUrl: 'https://x.example' } }, 'input.name'],
      [REGISTER, { input: { name: 'billing', uris: ['/a,/b'], upstreamUrl: 'https://x.example' } }, 'input.uris[0]'],
      [APPLICATION, { input: { consumer: 'partner', name: 'explorer', redirectUri: 'https://portal.example/a,b' } }, 'input.redirectUri'],
      [CONSUMER, { input: { username: '  ' } }, 'input.username'],
      [APPLICATION, { input: { consumer: 'partner', name: 'explorer', redirectUri: 'not a url' } }, 'input.redirectUri'],
      [ENABLE, { input: { api: 'billing', grant: 'PASSWORD', scopes: ['read write'] } }, 'input.scopes[0]'],
      [ENABLE, { input: { api: 'billing', grant: 'PASSWORD', scopes: Array.from({ length: 65 }, (_, i) => `s${i}`) } }, 'input.scopes'],
    ];
    for (const [query, variables, argument] of refused) {
      expect(firstError(await gql(query, variables))?.extensions, argument).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    }
    expect(await emulator.requests()).toEqual([]);
  });

  it('refuses a name that is a dot segment before any call, naming the GraphQL argument', async () => {
    const refused: [string, Record<string, unknown>, string][] = [
      [SETTINGS, { api: '..', consumer: 'partner' }, 'api'],
      [SETTINGS, { api: 'billing', consumer: '..' }, 'consumer'],
      [SETTINGS, { api: 'billing', consumer: ' . ' }, 'consumer'],
      [ENABLE, { input: { api: '..', grant: 'IMPLICIT' } }, 'input.api'],
      [APPLICATION, { input: { consumer: '..', name: 'x', redirectUri: CALLBACK } }, 'input.consumer'],
    ];
    for (const [query, variables, argument] of refused) {
      expect(firstError(await gql(query, variables))?.extensions, JSON.stringify(variables)).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    }
    // explorerSettings reads three things at once: no check may come after any of them started.
    expect(await calls()).toEqual([]);
  });

  it('explorerSettings: a blank application name is refused, not read as "the first application"', async () => {
    const { clientId: first } = await secureApi('CLIENT_CREDENTIALS');
    const second = await gql<{ createOAuthApplication: { clientSecret: string; application: { clientId: string } } }>(APPLICATION, {
      input: { consumer: 'partner-portal', name: 'second', redirectUri: CALLBACK },
    });
    knownSecrets.add(second.data!.createOAuthApplication.clientSecret);
    const clientIdOf = async (application: string | null) =>
      (await gql<{ explorerSettings: { clientId: string | null } }>(SETTINGS, { api: 'billing', consumer: 'partner-portal', application })).data!.explorerSettings.clientId;
    expect(await clientIdOf(null)).toBe(first);
    expect(await clientIdOf('second')).toBe(second.data!.createOAuthApplication.application.clientId);

    await emulator.clearRequests();
    for (const application of ['', '   ']) {
      const result = await gql(SETTINGS, { api: 'billing', consumer: 'partner-portal', application });
      expect(result.data).toEqual({ explorerSettings: null });
      expect(firstError(result)?.extensions, JSON.stringify(application)).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'application' });
    }
    expect(await calls()).toEqual([]);
  });

  it('one operation holds at most 20 administration fields: the 21st is refused without a call', async () => {
    const aliases = Array.from({ length: 21 }, (_, index) => `c${index}: createConsumer(input: { username: "partner-${index}" }) { username }`).join(' ');
    const result = await gql<Record<string, { username: string } | null>>(`mutation { ${aliases} }`);
    expect(result.data!.c19).toEqual({ username: 'partner-19' });
    expect(result.data!.c20).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]).toMatchObject({ path: ['c20'], extensions: { code: 'BAD_USER_INPUT', argument: 'operation' } });
    expect(await calls()).toEqual(Array.from({ length: 20 }, () => 'POST /consumers'));
  });

  it('409 on a duplicate name is CONFLICT; 404 on a write is NOT_FOUND; 400 field errors are BAD_USER_INPUT with fieldErrors, in either dialect', async () => {
    await secureApi('CLIENT_CREDENTIALS');
    const duplicate = await gql(REGISTER, { input: { name: 'billing', uris: ['/b2'], upstreamUrl: 'https://x.example' } });
    expect(firstError(duplicate)).toMatchObject({ message: "gatewayAdmin: name: already exists with value 'billing'", extensions: { code: 'CONFLICT', status: 409 } });
    expect(firstError(await gql(CONSUMER, { input: { username: 'partner-portal' } }))?.extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(firstError(await gql(ENABLE, { input: { api: 'billing', grant: 'PASSWORD' } }))?.extensions).toMatchObject({ code: 'CONFLICT', status: 409 });

    expect(firstError(await gql(APPLICATION, { input: { consumer: 'nobody', name: 'explorer', redirectUri: CALLBACK } }))?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(firstError(await gql(ENABLE, { input: { api: 'nothing', grant: 'PASSWORD' } }))?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    const noSlash = { input: { name: 'ledger', uris: ['ledger'], upstreamUrl: 'https://x.example' } };
    expect(firstError(await gql(REGISTER, noSlash))?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      status: 400,
      fieldErrors: [{ field: 'uris', messages: ["uri with value 'ledger' is invalid: must be prefixed with slash"] }],
    });
    await gql(REGISTER, { input: { name: 'ledger', uris: ['/ledger'], upstreamUrl: 'https://x.example' } });
    const mandatory = await gql(ENABLE, { input: { api: 'ledger', grant: 'PASSWORD', mandatoryScope: true } });
    expect(firstError(mandatory)?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      fieldErrors: [{ field: 'config.mandatory_scope', messages: ['To set a mandatory scope you also need to create available scopes'] }],
    });

    await emulator.control('error-dialect', { dialect: 'structured' });
    expect(firstError(await gql(REGISTER, noSlash))?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: [{ field: 'uris', messages: ["uri with value 'ledger' is invalid: must be prefixed with slash"] }] });
    expect(firstError(await gql(CONSUMER, { input: { username: 'partner-portal' } }))?.extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
  });

  it('explorerSettings: null for an unknown API, BAD_USER_INPUT for an API the plugin does not secure, the root paths under a plugin that secures every API', async () => {
    expect(await gql(SETTINGS, { api: 'nothing', consumer: 'nobody' })).toEqual({ data: { explorerSettings: null } });
    await gql(REGISTER, { input: { name: 'open', uris: ['/open'], upstreamUrl: 'https://x.example' } });
    expect(firstError(await gql(SETTINGS, { api: 'open', consumer: 'nobody' }))?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'api' });

    // A plugin made on the admin interface directly for every API: its endpoints are at the root.
    const response = await fetch(`${emulator.url}/plugins`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=oauth2&config.enable_client_credentials=true&config.enable_password_grant=true&config.scopes=a,b',
    });
    expect(response.status).toBe(201);
    const settings = await gql<{ explorerSettings: Record<string, unknown> }>(SETTINGS, { api: 'open', consumer: 'nobody' });
    expect(settings.data!.explorerSettings).toMatchObject({ grantType: null, grants: ['CLIENT_CREDENTIALS', 'PASSWORD'], tokenPath: '/oauth2/token', authorizePath: null, clientId: null, scopes: ['a', 'b'] });
  });

  it('a 2xx of the wrong shape is UPSTREAM_ERROR; a dropped connection is UPSTREAM_UNAVAILABLE', async () => {
    await emulator.fault({ path: '/consumers', method: 'POST', status: 201, body: { id: 5, username: ['not', 'a', 'name'] }, times: 1 });
    const wrongShape = await gql(CONSUMER, { input: { username: 'partner' } });
    expect(wrongShape.data).toEqual({ createConsumer: null });
    expect(firstError(wrongShape)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'gatewayAdmin', status: 201 });

    // An application that names no consumer breaks the contract too.
    await emulator.fault({ path: '/consumers/partner/oauth2/', method: 'POST', status: 201, body: { id: 'a', name: 'x', client_id: 'c', client_secret: 's', redirect_uri: [CALLBACK] }, times: 1 });
    expect(firstError(await gql(APPLICATION, { input: { consumer: 'partner', name: 'x', redirectUri: CALLBACK } }))?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR' });

    await emulator.fault({ path: '/consumers', method: 'POST', drop: true, times: 1 });
    expect(firstError(await gql(CONSUMER, { input: { username: 'partner' } }))?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });
});
