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
