import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createDashboardsEmulator } from '../../emulators/dashboards/emulator.ts';
import { DEMO_TOKEN } from '../../emulators/dashboards/data.ts';
import { emulatorControl } from '../support/stack.ts';

/** The emulator is the upstream of every other test: hold it to the spec directly. */
const started = await startEmulator(createDashboardsEmulator(), 0);
afterAll(() => started.close());
const control = emulatorControl(started.url);

beforeEach(() => control.reset());

const call = async (method: string, path: string, body?: unknown, token: string | null = DEMO_TOKEN) => {
  const response = await fetch(`${started.url}${path}`, {
    method,
    headers: { ...(token ? { 'service-token': token } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
};
const get = (path: string) => call('GET', path);
const results = (body: Record<string, unknown> | undefined) => body?.results as Record<string, unknown>[];

describe('dashboards emulator', () => {
  it('answers a missing or unknown service-token with the default error body', async () => {
    for (const token of [null, 'nope-nope-nope']) {
      const response = await call('GET', '/dashboards', undefined, token);
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ code: 401, message: 'Invalid or missing service token', fields: [] });
    }
  });

  it('pages every list by index from 0, 15 by default, at most 100', async () => {
    const first = await get('/dashboards');
    expect(first.body).toMatchObject({ totalCount: 20, currentPage: 0 });
    expect(results(first.body)).toHaveLength(15);
    const second = await get('/dashboards?page=1&pageSize=15');
    expect(results(second.body).map((dashboard) => dashboard.id)).toEqual(['dsh_0016', 'dsh_0017', 'dsh_0018', 'dsh_0019', 'dsh_0020']);
    expect((await get('/dashboards?pageSize=100')).status).toBe(200);

    const tooMany = await get('/environments?pageSize=101');
    expect(tooMany).toMatchObject({ status: 400, body: { code: 400, message: 'Validation failed', fields: [{ name: 'pageSize', errors: ['must be a whole number from 1 to 100'] }] } });
    const negative = await get('/dashboards/dsh_0001/widgets?page=-1&pageSize=x');
    expect((negative.body?.fields as { name: string }[]).map((field) => field.name)).toEqual(['page', 'pageSize']);
  });

  it('derives unique slugs from names, finds by id or slug, and keeps the slug on rename', async () => {
    const created = await call('POST', '/dashboards', { name: 'Équipe: Café' });
    expect(created).toMatchObject({ status: 200, body: { results: [{ id: 'dsh_0021', name: 'Équipe: Café', slug: 'equipe-cafe' }] } });
    expect(results((await call('POST', '/dashboards', { name: 'equipe cafe' })).body)[0]).toMatchObject({ slug: 'equipe-cafe-2' });
    expect(results((await call('POST', '/dashboards', { name: '!!!' })).body)[0]).toMatchObject({ slug: 'dashboard' });
    // The seed shows a collision too.
    expect(results((await get('/dashboards/dsh_0004')).body)[0]).toEqual({ id: 'dsh_0004', name: 'Team Payments', slug: 'team-payments-2' });

    const renamed = await call('PUT', '/dashboards/equipe-cafe', { name: 'Coffee team' });
    expect(renamed.body).toEqual({ results: [{ id: 'dsh_0021', name: 'Coffee team', slug: 'equipe-cafe' }] });
    expect(results((await get('/dashboards/dsh_0021')).body)[0]).toMatchObject({ name: 'Coffee team' });
    expect(await get('/dashboards/coffee-team')).toMatchObject({ status: 404, body: { code: 404, message: 'Dashboard not found', fields: [] } });
  });

  it('answers validation failures in the default error body', async () => {
    expect(await call('POST', '/dashboards', {})).toMatchObject({ status: 400, body: { code: 400, message: 'Validation failed', fields: [{ name: 'name', errors: ['is required'] }] } });
    const widget = await call('POST', '/dashboards/dsh_0001/widgets', { title: 'x', rowCount: 2.5, metric: 7 });
    expect(widget.body?.fields).toEqual([
      { name: 'type', errors: ['is required'] },
      { name: 'rowCount', errors: ['must be a whole number from 1 to 100'] },
      { name: 'metric', errors: ['must be a string'] },
    ]);
    const environment = await call('POST', '/environments', { name: 'x', default: 'yes', filters: [{ dimension: 'planet', operator: 'is' }] });
    expect((environment.body?.fields as { name: string }[]).map((field) => field.name)).toEqual(['default', 'filters[0].dimension', 'filters[0].value']);
  });

  it('lists environments without their filters, and shows them on the environment', async () => {
    expect(results((await get('/environments')).body)[0]).toEqual({ id: 'env_0001', slug: 'production', name: 'Production', default: false });
    expect(results((await get('/environments/production')).body)[0]).toEqual({
      id: 'env_0001',
      name: 'Production',
      slug: 'production',
      default: false,
      filters: [{ dimension: 'host', operator: 'is', value: 'api.shop.example' }],
    });
  });

  it('keeps exactly one default environment, the catch-all of untagged and unknown traffic', async () => {
    const environments = async () => (await get('/browse/values?dimension=environment')).body?.results as string[];
    expect([...(await environments())].sort()).toEqual(['everything-else', 'production', 'staging']);

    expect(await call('PUT', '/environments/everything-else', { default: false })).toMatchObject({ status: 400, body: { fields: [{ name: 'default' }] } });
    await call('PUT', '/environments/staging', { default: true });
    const list = results((await get('/environments')).body);
    expect(list.filter((environment) => environment.default).map((environment) => environment.slug)).toEqual(['staging']);
    // Untagged traffic now counts in staging, and everything-else holds nothing of its own.
    expect([...(await environments())].sort()).toEqual(['production', 'staging']);
  });

  it('browses values most frequent first within base64 JSON filters, and refuses filters it cannot read', async () => {
    const filters = Buffer.from(JSON.stringify([{ dimension: 'status', operator: 'is', value: '500' }])).toString('base64');
    const values = await get(`/browse/values?dimension=country&size=2&filters=${encodeURIComponent(filters)}`);
    expect(values.body).toMatchObject({ currentPage: 0 });
    expect(results(values.body)).toHaveLength(2);
    expect(values.body?.totalCount).toBeGreaterThan(2);

    const broken = await get('/browse/values?dimension=country&filters=%7Bnot-base64');
    expect(broken).toMatchObject({ status: 400, body: { fields: [{ name: 'filters', errors: ['must be a base64-encoded JSON array of environment filters'] }] } });
    expect(await get('/browse/values')).toMatchObject({ status: 400, body: { fields: [{ name: 'dimension', errors: ['is required'] }] } });
    const grouped = await get('/browse/grouped');
    expect(grouped.body).toMatchObject({ totalCount: 8, currentPage: 0, results: { Response: [{ name: 'status', type: 'number' }] } });
  });

  it('counts each authenticated call against the quota, and answers 429 when it is used up', async () => {
    await get('/dashboards');
    const stats = results((await get('/stats')).body)[0];
    expect(stats).toEqual({ avgReqPerSec: 20, nbReq: 1_728_002, rateLimitingRemaining: 99_998, rateLimitingBase: 100_000 });
    await control.control('quota', { remaining: 0 });
    const refused = await get('/stats');
    expect(refused).toMatchObject({ status: 429, body: { code: 429, fields: [] } });
    expect(refused.headers.get('retry-after')).toBe('3600');
  });

  it('serves no widget update or delete, and logs header names only', async () => {
    expect((await call('PUT', '/dashboards/dsh_0001/widgets/wdg_0001', { title: 'x' })).status).toBe(405);
    expect((await call('DELETE', '/dashboards/dsh_0001')).status).toBe(405);
    await get('/nothing-here');
    const log = await control.requests();
    expect(log.map((entry) => [entry.method, entry.path, entry.status, entry.unmatched ?? false])).toEqual([
      ['PUT', '/dashboards/dsh_0001/widgets/wdg_0001', 405, true],
      ['DELETE', '/dashboards/dsh_0001', 405, true],
      ['GET', '/nothing-here', 404, true],
    ]);
    expect(log[0]!.headers).toContain('service-token');
    expect(JSON.stringify(log)).not.toContain(DEMO_TOKEN);
  });
});
