import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';

/**
 * The emulated gateway in front of the graph, as section D's guide secures an API: the graph signs
 * in with OAuth 2.0 through the gateway (`TRUSTED_PROXIES`), which checks the partner's token and
 * tells the graph who is calling in its `X-Consumer-*` and `X-Authenticated-*` headers.
 */
const t = await startTestStack({ GATEWAY_AUTH: 'oauth2', TRUSTED_PROXIES: '127.0.0.1' });
const gateway = t.emulator('gatewayAdmin');
const recognition = t.emulator('recognition');

beforeEach(async () => {
  await gateway.reset();
  await recognition.reset();
});

/** Arranged on the admin interface directly: the graph's own administration fields need a signed-in administrator here. */
async function admin(path: string, fields: Record<string, string>): Promise<Record<string, string>> {
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  expect(response.status, path).toBe(201);
  return (await response.json()) as Record<string, string>;
}

async function partnerToken(scope: string): Promise<string> {
  await admin('/apis', { name: 'graph', uris: '/graph', upstream_url: new URL(t.graphqlUrl).origin });
  await admin('/consumers', { username: 'partner' });
  const application = await admin('/consumers/partner/oauth2/', { name: 'explorer', redirect_uri: 'https://portal.example/cb' });
  await admin('/apis/graph/plugins/', {
    name: 'oauth2',
    'config.enable_client_credentials': 'true',
    'config.scopes': 'recognition:read,dashboards:read',
    'config.accept_http_if_already_terminated': 'true',
  });
  knownSecrets.add(application.client_secret!);
  const response = await fetch(`${gateway.url}/graph/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: application.client_id!, client_secret: application.client_secret!, scope }),
  });
  const { access_token: token } = (await response.json()) as { access_token: string };
  knownSecrets.add(token);
  return token;
}

const QUERY = JSON.stringify({ query: '{ hashtagTrends { hashtag } }' });
const throughGateway = (headers: Record<string, string>) =>
  fetch(`${gateway.url}/graph/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.admin, ...headers }, body: QUERY });

describe('gatewayAdmin emulator as the API gateway in front of the graph', () => {
  it('a partner token with the scope reaches the graph, which knows the caller from the proxy', async () => {
    const token = await partnerToken('recognition:read');
    const response = await throughGateway({ authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data?: { hashtagTrends: unknown[] }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data!.hashtagTrends.length).toBeGreaterThan(0);
    expect((await recognition.requests()).map((request) => request.path)).toEqual(['/api/v1/analytics/trends']);
    // The token travelled to the gateway, which logged the call without it.
    expect(JSON.stringify(await gateway.requests())).not.toContain(token);
  });

  it('a token without the field’s scope is FORBIDDEN by the graph; no token, or a forged one, is 401 at the gateway', async () => {
    const token = await partnerToken('dashboards:read');
    const narrow = (await (await throughGateway({ authorization: `Bearer ${token}` })).json()) as { errors?: { extensions?: Record<string, unknown> }[] };
    expect(narrow.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN', field: 'Query.hashtagTrends' } }]);

    const missing = await throughGateway({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="service"');
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'The access token is missing' });
    // Headers naming a caller are the plugin's to set: a client's own are dropped, and without a valid token it gets no further.
    const forged = await throughGateway({ authorization: 'Bearer not-a-token', 'x-consumer-username': 'admin', 'x-authenticated-scope': 'recognition:read' });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ error: 'invalid_token' });
    expect(await recognition.requests()).toEqual([]);
  });
});
