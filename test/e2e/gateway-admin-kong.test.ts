import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ADMIN_TOKEN } from '../../emulators/gatewayAdmin/data.ts';
import { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../../subgraphs/kit/callScope.ts';
import { knownSecrets } from '../support/logs.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';

/**
 * The real admin interface's quirks (Kong 0.13.1), as explorerSettings meets them: plugins on
 * routes and services, lists paged by 100, and empty lists sent as `{}`.
 */
const t = await startTestStack();
const emulator = t.emulator('gatewayAdmin');
const admin = { 'x-gateway-admin-token': DEMO_ADMIN_TOKEN };
const subgraphUrl = t.stack.services.find((service) => service.name === 'gatewayAdmin')!.subgraphUrl;

beforeEach(() => emulator.reset());

interface Settings {
  grantType: string | null;
  grants: string[];
  tokenPath: string;
  clientId: string | null;
  scopes: string[];
}
const SETTINGS = 'query ($api: String!, $consumer: String!, $application: String) { explorerSettings(api: $api, consumer: $consumer, application: $application) { grantType grants tokenPath clientId scopes } }';
const settings = (api: string, application?: string) => t.gql<{ explorerSettings: Settings | null }>(SETTINGS, { headers: admin, variables: { api, consumer: 'portal', application } });
const firstError = (result: GraphQLResult<unknown>) => result.errors?.[0];
/** Each read of one path, with its query. */
const callsOf = async (path: string) => (await emulator.requests()).filter((request) => request.method === 'GET' && request.path === path).map((request) => request.query);

/** A UUID for a route or a service: the emulator models neither, and takes any. */
const uuid = (n: number) => `6f1c9a2e-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** A POST to the admin interface directly, as an operator's own tooling makes it; 201 expected. */
async function create(path: string, fields: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body;
}
/** An OAuth 2.0 plugin made on the admin interface directly: on a route, a service, an API, or (no id) every API. */
const plugin = (on: Record<string, string>, grant = 'enable_client_credentials', scopes = 'read') => create('/plugins', { name: 'oauth2', [`config.${grant}`]: 'true', 'config.scopes': scopes, ...on });

async function ordersAndPortal() {
  const result = await t.gql(
    'mutation { registerApi(input: { name: "orders", uris: ["/orders"], upstreamUrl: "http://127.0.0.1:9/" }) { id } createConsumer(input: { username: "portal" }) { id } }',
    { headers: admin },
  );
  expect(result.errors).toBeUndefined();
}

describe('gatewayAdmin against Kong 0.13.1: a plugin on a route or a service secures no API', () => {
  it('an API without a plugin of its own is not secured by another route’s or service’s plugin; a plugin with no api, route or service secures it', async () => {
    await ordersAndPortal();
    await plugin({ route_id: uuid(0xaa) }, 'enable_password_grant', 'billing:admin');
    await plugin({ service_id: uuid(0xbb) });
    const unsecured = await settings('orders');
    expect(unsecured.data).toEqual({ explorerSettings: null });
    expect(firstError(unsecured)).toMatchObject({ message: "api: the API 'orders' is not secured with the OAuth 2.0 plugin", extensions: { code: 'BAD_USER_INPUT', argument: 'api' } });
    // The list asked for holds both: they are the answer's, not a filter's.
    expect(await callsOf('/plugins')).toEqual([{ name: 'oauth2' }]);

    await plugin({}, 'enable_authorization_code', 'read,write');
    expect((await settings('orders')).data!.explorerSettings).toMatchObject({ grantType: 'AUTHORIZATION_CODE', tokenPath: '/oauth2/token', scopes: ['read', 'write'] });
  });
});

describe('gatewayAdmin against Kong 0.13.1: every page of a list', () => {
  it('finds the plugin that secures every API on the second page of GET /plugins, sending the filter again with the offset', async () => {
    await ordersAndPortal();
    for (let n = 1; n <= 120; n += 1) await plugin({ route_id: uuid(n) });
    await plugin({}, 'enable_password_grant', 'global');
    expect((await settings('orders')).data!.explorerSettings).toMatchObject({ grantType: 'PASSWORD', tokenPath: '/oauth2/token', scopes: ['global'] });
    expect(await callsOf('/plugins')).toEqual([{ name: 'oauth2' }, { name: 'oauth2', offset: expect.any(String) }]);
  });

  it('finds an application past the first 100 of a consumer', async () => {
    await ordersAndPortal();
    await plugin({});
    const clientIds: string[] = [];
    for (let n = 1; n <= 101; n += 1) {
      const application = await create('/consumers/portal/oauth2/', { name: `app-${n}`, redirect_uri: 'https://portal.example/cb' });
      knownSecrets.add(String(application.client_secret));
      clientIds.push(String(application.client_id));
    }
    expect((await settings('orders', 'app-101')).data!.explorerSettings).toMatchObject({ clientId: clientIds[100] });
    expect(await callsOf('/consumers/portal/oauth2/')).toEqual([{}, { offset: expect.any(String) }]);
    // Unnamed, the first application of the first page.
    expect((await settings('orders')).data!.explorerSettings).toMatchObject({ clientId: clientIds[0] });
  });

  it('follows the pages of an API’s own plugins', async () => {
    await ordersAndPortal();
    const own = { id: uuid(1), name: 'oauth2', api_id: uuid(2), enabled: true, created_at: 1526000000000, config: { scopes: ['own'], enable_implicit_grant: true } };
    await emulator.fault({ path: '/apis/orders/plugins/', method: 'GET', status: 200, times: 1, body: { total: 1, data: [], offset: 'Mg==', next: `${emulator.url}/apis/orders/plugins/?offset=Mg%3D%3D&size=100` } });
    await emulator.fault({ path: '/apis/orders/plugins/', method: 'GET', status: 200, times: 1, body: { total: 1, data: [own] } });
    expect((await settings('orders')).data!.explorerSettings).toMatchObject({ grantType: 'IMPLICIT', tokenPath: '/orders/oauth2/token', scopes: ['own'] });
    expect(await callsOf('/apis/orders/plugins/')).toEqual([{ name: 'oauth2' }, { name: 'oauth2', offset: 'Mg==' }]);
    expect(await callsOf('/plugins')).toEqual([]);
  });

  it('an upstream that repeats an offset is read twice, then UPSTREAM_ERROR saying the list could not be read whole', async () => {
    await ordersAndPortal();
    await emulator.fault({ path: '/plugins', method: 'GET', status: 200, body: { total: 7, data: [], offset: 'b2Zmc2V0', next: `${emulator.url}/plugins?offset=b2Zmc2V0&size=100` } });
    const result = await settings('orders');
    expect(result.data).toEqual({ explorerSettings: null });
    expect(firstError(result)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'gatewayAdmin' });
    expect(firstError(result)?.message).toMatch(/could not be read whole/);
    expect(await callsOf('/plugins')).toEqual([{ name: 'oauth2' }, { name: 'oauth2', offset: 'b2Zmc2V0' }]);
  });

  it('a list longer than 20 pages is UPSTREAM_ERROR after 20 calls, not "not secured"', async () => {
    await ordersAndPortal();
    for (let page = 1; page <= 25; page += 1) {
      await emulator.fault({ path: '/plugins', method: 'GET', status: 200, times: 1, body: { total: 2500, data: [], offset: `page-${page}`, next: `${emulator.url}/plugins?offset=page-${page}&size=100` } });
    }
    const result = await settings('orders');
    expect(firstError(result)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'gatewayAdmin' });
    expect(firstError(result)?.message).toMatch(/could not be read whole/);
    expect(await callsOf('/plugins')).toHaveLength(20);
  });

  it('each page is an upstream call of the request’s budget', async () => {
    await ordersAndPortal();
    for (let n = 1; n <= 100; n += 1) await plugin({ route_id: uuid(n) });
    await plugin({});
    await emulator.clearRequests();
    // The API, its plugins and the applications, then the first page of GET /plugins: the second is one call too many.
    const response = await fetch(subgraphUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin, [CALL_BUDGET_HEADER]: '4' },
      body: JSON.stringify({ query: '{ explorerSettings(api: "orders", consumer: "portal") { tokenPath } }' }),
    });
    const result = (await response.json()) as GraphQLResult;
    expect(response.headers.get(CALLS_MADE_HEADER)).toBe('4');
    expect(firstError(result)?.extensions).toMatchObject({ code: 'OPERATION_TOO_EXPENSIVE', service: 'gatewayAdmin', budget: 4 });
    expect(await callsOf('/plugins')).toEqual([{ name: 'oauth2' }]);
  });
});

describe('gatewayAdmin against Kong 0.13.1: an empty list comes as {}', () => {
  it('names an unsecured API as the caller did, never with the service’s text at any length', async () => {
    await ordersAndPortal();
    await emulator.fault({ path: '/apis/orders', method: 'GET', status: 200, body: { id: uuid(0xcc), name: 'n'.repeat(200_000), uris: ['/orders'], upstream_url: 'http://127.0.0.1:9/', created_at: 1526000000000 }, times: 1 });
    const unsecured = await settings('orders');
    expect(firstError(unsecured)?.message).toBe("api: the API 'orders' is not secured with the OAuth 2.0 plugin");
  });

  it('an API routed by host alone (uris: {}), scopes: {} and redirect_uri: {} are read as empty lists', async () => {
    await create('/consumers', { username: 'portal' });
    const api = await create('/apis', { name: 'orders', hosts: 'orders.example.com', uris: '', upstream_url: 'http://127.0.0.1:9/' });
    expect(api.uris).toEqual({});
    await create('/apis/orders/plugins/', { name: 'oauth2', 'config.enable_client_credentials': 'true', 'config.scopes': '' });
    const found = await settings('orders');
    expect(found.errors).toBeUndefined();
    // Routed by host, the API's endpoints are at the root of that host.
    expect(found.data!.explorerSettings).toEqual({ grantType: 'CLIENT_CREDENTIALS', grants: ['CLIENT_CREDENTIALS'], tokenPath: '/oauth2/token', clientId: null, scopes: [] });

    await emulator.fault({
      path: '/consumers/portal/oauth2/',
      method: 'GET',
      status: 200,
      times: 1,
      body: { total: 1, data: [{ id: uuid(3), name: 'explorer', client_id: 'c'.repeat(32), redirect_uri: {}, consumer_id: uuid(4), created_at: 1526000000000 }] },
    });
    expect((await settings('orders')).data!.explorerSettings).toMatchObject({ clientId: 'c'.repeat(32) });
  });
});
