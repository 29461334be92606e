import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createGatewayAdminEmulator } from '../../emulators/gatewayAdmin/emulator.ts';
import { emulatorControl } from '../support/stack.ts';

/** The emulator is the upstream of the gatewayAdmin tests: hold it to the real admin API's statuses and bodies directly. */
const started = await startEmulator(createGatewayAdminEmulator(), 0);
afterAll(() => started.close());
const control = emulatorControl(started.url);

beforeEach(() => control.reset());

/** A form-encoded call, as the admin interface is documented. */
const form = async (method: string, path: string, fields?: Record<string, string>, headers: Record<string, string> = {}) => {
  const response = await fetch(`${started.url}${path}`, {
    method,
    headers: { ...(fields ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    ...(fields ? { body: new URLSearchParams(fields) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
};

describe('gatewayAdmin emulator: the admin interface', () => {
  it('answers 201 with the created object, generating ids, the client id and secret, the provision key and the token expiry', async () => {
    const api = await form('POST', '/apis', { name: 'billing', uris: '/billing,/invoices', upstream_url: 'https://billing.internal.example' });
    expect(api.status).toBe(201);
    expect(api.body).toMatchObject({ name: 'billing', uris: ['/billing', '/invoices'], upstream_url: 'https://billing.internal.example', strip_uri: true, preserve_host: false });
    expect(api.body!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof api.body!.created_at).toBe('number');

    const consumer = await form('POST', '/consumers', { username: 'partner' });
    expect(consumer).toMatchObject({ status: 201, body: { username: 'partner', custom_id: null } });

    const application = await form('POST', '/consumers/partner/oauth2/', { name: 'explorer', redirect_uri: 'https://portal.example/cb' });
    expect(application).toMatchObject({ status: 201, body: { name: 'explorer', consumer_id: consumer.body!.id, redirect_uri: ['https://portal.example/cb'] } });
    expect(application.body!.client_id).toMatch(/^[0-9a-f]{32}$/);
    expect(application.body!.client_secret).toMatch(/^[0-9a-f]{32}$/);

    const plugin = await form('POST', '/apis/billing/plugins/', { name: 'oauth2', 'config.enable_authorization_code': 'true', 'config.scopes': 'read,write' });
    expect(plugin).toMatchObject({
      status: 201,
      body: {
        name: 'oauth2',
        api_id: api.body!.id,
        enabled: true,
        config: { scopes: ['read', 'write'], mandatory_scope: false, token_expiration: 7200, enable_authorization_code: true, enable_client_credentials: false, accept_http_if_already_terminated: false },
      },
    });
    expect((plugin.body!.config as Record<string, unknown>).provision_key).toMatch(/^[0-9a-f]{32}$/);

    // Reads: by name or id, lists as {total, data}.
    expect((await form('GET', `/apis/${String(api.body!.id)}`)).body).toMatchObject({ name: 'billing' });
    expect((await form('GET', '/apis/billing/plugins?name=oauth2')).body).toMatchObject({ total: 1, data: [{ id: plugin.body!.id }] });
    expect((await form('GET', '/consumers/partner/oauth2')).body).toMatchObject({ total: 1, data: [{ client_id: application.body!.client_id }] });
    // A JSON body is read as well as a form.
    const json = await fetch(`${started.url}/consumers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'second' }) });
    expect(json.status).toBe(201);
  });

  it('409 on a duplicate; 400 naming fields, flat or structured; 404 {message: "Not found"}', async () => {
    await form('POST', '/apis', { name: 'billing', uris: '/billing', upstream_url: 'https://x.example' });
    expect(await form('POST', '/apis', { name: 'billing', uris: '/other', upstream_url: 'https://x.example' })).toMatchObject({
      status: 409,
      body: { name: "already exists with value 'billing'" },
    });
    expect(await form('POST', '/apis', { name: 'bad name', uris: 'nope' })).toMatchObject({
      status: 400,
      body: { name: "name must only contain alphanumeric and '., -, _, ~' characters", upstream_url: 'upstream_url is required', uris: "uri with value 'nope' is invalid: must be prefixed with slash" },
    });
    expect(await form('POST', '/apis', { name: 'nowhere', upstream_url: 'https://x.example' })).toMatchObject({
      status: 400,
      body: { message: "at least one of 'hosts', 'uris' or 'methods' must be specified" },
    });
    expect(await form('POST', '/consumers', {})).toMatchObject({ status: 400, body: { message: "At least a 'custom_id' or a 'username' must be specified" } });
    expect(await form('POST', '/consumers/nobody/oauth2/', { name: 'x', redirect_uri: 'https://x.example' })).toEqual({ status: 404, headers: expect.anything(), body: { message: 'Not found' } });
    await form('POST', '/consumers', { username: 'partner' });
    expect(await form('POST', '/consumers/partner/oauth2/', { name: 'x', redirect_uri: 'https://x.example/#frag' })).toMatchObject({
      status: 400,
      body: { redirect_uri: "fragment not allowed in 'https://x.example/#frag'" },
    });
    expect(await form('POST', '/apis/billing/plugins/', { name: 'oauth2' })).toMatchObject({ status: 400, body: { config: 'You need to enable at least one OAuth flow' } });
    expect(await form('POST', '/apis/billing/plugins/', { name: 'oauth2', 'config.enable_password_grant': 'yes' })).toMatchObject({
      status: 400,
      body: { 'config.enable_password_grant': 'enable_password_grant is not a boolean' },
    });
    await form('POST', '/apis/billing/plugins/', { name: 'oauth2', 'config.enable_password_grant': 'true' });
    expect((await form('POST', '/apis/billing/plugins/', { name: 'oauth2', 'config.enable_password_grant': 'true' })).status).toBe(409);

    await control.control('error-dialect', { dialect: 'structured' });
    expect(await form('POST', '/apis', { name: 'billing', uris: '/other', upstream_url: 'https://x.example' })).toMatchObject({
      status: 409,
      body: { code: 5, name: 'unique constraint violation', fields: { name: 'billing' } },
    });
    expect(await form('POST', '/apis', { name: 'ledger', uris: 'nope', upstream_url: 'https://x.example' })).toMatchObject({
      status: 400,
      body: { code: 2, name: 'schema violation', message: "schema violation (uris: uri with value 'nope' is invalid: must be prefixed with slash)", fields: { uris: "uri with value 'nope' is invalid: must be prefixed with slash" } },
    });
    expect(await control.control('error-dialect', { dialect: 'klingon' })).toMatchObject({ message: expect.stringContaining('flat') });
  });

  it('logs every call without bodies or secret values, and reset forgets everything', async () => {
    await form('POST', '/consumers', { username: 'partner' });
    const application = await form('POST', '/consumers/partner/oauth2/', { name: 'x', redirect_uri: 'https://x.example' });
    await form('POST', '/billing/oauth2/token?client_secret=in-the-query-000000', { grant_type: 'client_credentials' });
    const log = await control.requests();
    expect(log.map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual(['POST /consumers 201', 'POST /consumers/partner/oauth2/ 201', 'POST /billing/oauth2/token 404']);
    expect(JSON.stringify(log)).not.toContain(String(application.body!.client_secret));
    expect(JSON.stringify(log)).not.toContain('in-the-query');
    await control.reset();
    expect((await form('GET', '/consumers/partner')).status).toBe(404);
  });
});

describe('gatewayAdmin emulator: Kong 0.13.1’s plugins on routes and services, paged lists, empty lists as {}', () => {
  const uuid = (n: number) => `6f1c9a2e-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  const oauth2 = (fields: Record<string, string> = {}) => ({ name: 'oauth2', 'config.enable_client_credentials': 'true', 'config.accept_http_if_already_terminated': 'true', ...fields });

  it('takes a plugin on a route or a service, which secures no API; refuses an api_id beside them, an id that is not a UUID, an API that does not exist', async () => {
    await form('POST', '/apis', { name: 'billing', uris: '/billing', upstream_url: 'https://x.example' });
    const onRoute = await form('POST', '/plugins', oauth2({ route_id: uuid(1) }));
    expect(onRoute).toMatchObject({ status: 201, body: { name: 'oauth2', route_id: uuid(1) } });
    expect(onRoute.body!.api_id).toBeUndefined();
    expect(await form('POST', '/plugins', oauth2({ service_id: uuid(2) }))).toMatchObject({ status: 201, body: { service_id: uuid(2) } });
    // One plugin of a name for each place: the same route again is 409.
    expect((await form('POST', '/plugins', oauth2({ route_id: uuid(1) }))).status).toBe(409);
    expect(await form('POST', '/plugins', oauth2({ api_id: uuid(3), route_id: uuid(1) }))).toMatchObject({ status: 400, body: { message: 'cannot configure plugin with api_id and one of route_id or service_id' } });
    expect(await form('POST', '/plugins', oauth2({ route_id: 'r1' }))).toMatchObject({ status: 400, body: { route_id: 'r1 is not a valid uuid' } });
    expect(await form('POST', '/plugins', oauth2({ api_id: uuid(3) }))).toMatchObject({ status: 400, body: { api_id: `does not exist with value '${uuid(3)}'` } });

    // GET /plugins?name=oauth2 holds them; neither runs for the API.
    expect((await form('GET', '/plugins?name=oauth2')).body).toMatchObject({ total: 2, data: [{ route_id: uuid(1) }, { service_id: uuid(2) }] });
    expect((await form('GET', `/plugins?route_id=${uuid(1)}`)).body).toMatchObject({ total: 1, data: [{ route_id: uuid(1) }] });
    expect(await form('GET', '/plugins?colour=red')).toMatchObject({ status: 400, body: { colour: 'unknown field' } });
    await form('POST', '/consumers', { username: 'partner' });
    const application = await form('POST', '/consumers/partner/oauth2/', { name: 'x', redirect_uri: 'https://x.example/cb' });
    const credentials = { grant_type: 'client_credentials', client_id: String(application.body!.client_id), client_secret: String(application.body!.client_secret) };
    expect((await form('POST', '/billing/oauth2/token', credentials, { 'x-forwarded-proto': 'https' })).status).toBe(404);
    // A plugin with none of the three secures every API.
    expect((await form('POST', '/plugins', oauth2())).status).toBe(201);
    expect((await form('POST', '/billing/oauth2/token', credentials, { 'x-forwarded-proto': 'https' })).status).toBe(200);
  });

  it('pages every list as Kong does: 100 rows by default, `size`, a base64 `offset` and a `next` URL that carries only offset and size', async () => {
    for (let n = 1; n <= 130; n += 1) expect((await form('POST', '/plugins', oauth2({ route_id: uuid(n) }))).status).toBe(201);
    const first = await form('GET', '/plugins?name=oauth2');
    expect(first.body).toMatchObject({ total: 130, offset: 'Mg==', next: `${started.url}/plugins?offset=Mg%3D%3D&size=100` });
    expect(first.body!.data).toHaveLength(100);
    const second = await form('GET', String(first.body!.next).slice(started.url.length));
    expect(second.body).toEqual({ total: 130, data: expect.any(Array) });
    expect((second.body!.data as { route_id: string }[]).map((plugin) => plugin.route_id)).toEqual(Array.from({ length: 30 }, (_, index) => uuid(101 + index)));

    const small = await form('GET', '/plugins?name=oauth2&size=60&offset=Mw==');
    expect((small.body!.data as unknown[]).length).toBe(10);
    expect(small.body!.next).toBeUndefined();
    // A filter narrows the total as well as the page.
    expect((await form('GET', `/plugins?name=oauth2&route_id=${uuid(7)}&size=5`)).body).toMatchObject({ total: 1, data: [{ route_id: uuid(7) }] });
    expect((await form('GET', '/plugins?size=0')).status).toBe(400);
    expect((await form('GET', '/plugins?offset=bm9wZQ==')).status).toBe(400);

    await form('POST', '/consumers', { username: 'partner' });
    for (let n = 1; n <= 101; n += 1) await form('POST', '/consumers/partner/oauth2/', { name: `app-${n}`, redirect_uri: 'https://x.example/cb' });
    const applications = await form('GET', '/consumers/partner/oauth2/');
    expect(applications.body).toMatchObject({ total: 101, offset: 'Mg==' });
    expect((await form('GET', '/consumers/partner/oauth2/?offset=Mg%3D%3D')).body).toMatchObject({ total: 101, data: [{ name: 'app-101' }] });
  });

  it('sends an empty list of an API or a plugin config as {}, as 0.x stores lists as JSON text', async () => {
    const api = await form('POST', '/apis', { name: 'orders', hosts: 'orders.example.com', uris: '', upstream_url: 'https://x.example' });
    expect(api).toMatchObject({ status: 201, body: { hosts: ['orders.example.com'], uris: {} } });
    // A list never given is not in the answer.
    expect(api.body!.methods).toBeUndefined();
    const plugin = await form('POST', '/apis/orders/plugins/', oauth2({ 'config.scopes': '' }));
    expect(plugin.body).toMatchObject({ config: { scopes: {} } });
    expect((await form('GET', '/apis/orders')).body).toMatchObject({ uris: {} });
    expect((await form('GET', '/apis/orders/plugins')).body).toMatchObject({ data: [{ config: { scopes: {} } }] });
  });
});

describe('gatewayAdmin emulator: the plugin endpoints', () => {
  it('introspects what it issued (RFC 7662), and nothing else', async () => {
    await form('POST', '/apis', { name: 'billing', uris: '/billing', upstream_url: 'https://x.example' });
    await form('POST', '/consumers', { username: 'partner' });
    const application = await form('POST', '/consumers/partner/oauth2/', { name: 'x', redirect_uri: 'https://x.example/cb' });
    await form('POST', '/apis/billing/plugins/', { name: 'oauth2', 'config.enable_client_credentials': 'true', 'config.accept_http_if_already_terminated': 'true', 'config.token_expiration': '60' });
    const token = await form(
      'POST',
      '/billing/oauth2/token',
      { grant_type: 'client_credentials', client_id: String(application.body!.client_id), client_secret: String(application.body!.client_secret), state: 's1' },
      { 'x-forwarded-proto': 'https' },
    );
    expect(token.body).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 60, state: 's1' });
    expect(token.headers.get('pragma')).toBe('no-cache');
    const introspect = (value: string) => control.control('introspect', { token: value });
    expect(await introspect(String(token.body!.access_token))).toMatchObject({ active: true, client_id: application.body!.client_id, exp: expect.any(Number) });
    expect(await introspect('not-issued')).toEqual({ active: false });
    await control.control('clock', { advanceMs: 60_001 });
    expect(await introspect(String(token.body!.access_token))).toEqual({ active: false });
  });

  it('answers a path no API claims as the real proxy does', async () => {
    for (const [method, path] of [
      ['GET', '/billing/oauth2/token'],
      ['DELETE', '/apis'],
      ['GET', '/nothing/here/at/all/x/y'],
    ] as const) {
      expect(await form(method, path), `${method} ${path}`).toMatchObject({ status: 404, body: { message: 'no route and no API found with those values' } });
    }
  });
});
