import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_APIKEY } from '../../emulators/imports/data.ts';
import { startImportsEmulator } from '../support/importsPieces.ts';

/** The emulator is the upstream of every other imports test: hold it to section C directly. */
const emulator = await startImportsEmulator();
afterAll(() => emulator.close());
const { control } = emulator;
beforeEach(() => control.reset());

const call = async (method: string, path: string, query: Record<string, string> = {}) => {
  const response = await fetch(`${emulator.url}${path}?${new URLSearchParams(query)}`, { method });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
};
const post = (query: Record<string, string>, path = '/v1/imports') => call('POST', path, { apikey: DEMO_APIKEY, import_type: 'swagger', ...query });
const get = (id: string) => call('GET', `/v1/imports/${id}`, { apikey: DEMO_APIKEY });
const firstError = (body: Record<string, unknown> | undefined) => (body?.errors as Record<string, unknown>[] | undefined)?.[0];

describe('imports emulator', () => {
  it('serves its sample descriptions, JSON and YAML, outside the request log', async () => {
    const json = await fetch(emulator.file('petstore.json'));
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(((await json.json()) as { swagger: string }).swagger).toBe('2.0');
    for (const name of ['orders.yaml', 'no-base-path.yaml', 'broken.yaml']) expect((await fetch(emulator.file(name))).status).toBe(200);
    expect((await fetch(emulator.file('nothing.yaml'))).status).toBe(404);
    expect(await control.requests()).toEqual([]);
  });

  it('answers 202 with a link, with or without the trailing slash, and the job moves on its clock', async () => {
    const created = await post({ api_id: 'api_1001', file_location: emulator.file('orders.yaml') }, '/v1/imports/');
    expect(created).toMatchObject({ status: 202, body: { type: 'imports', id: 'imp_0001', links: { self: `${emulator.url}/v1/imports/imp_0001` } } });
    expect(await get('imp_0001')).toMatchObject({ status: 200, body: { id: 'imp_0001', type: 'swagger', status: 'in_progress' } });
    // A job is in progress for 3 s of the emulator's clock by default.
    const [job] = (await (await fetch(`${emulator.url}/__emulator/imports`)).json()) as { readyAt: number; createdAt: number }[];
    expect(job!.readyAt - job!.createdAt).toBe(3000);
    // Far more here, so that real time passing cannot finish it.
    await control.control('processing', { ms: 600_000 });
    await post({ api_id: 'api_1001', file_location: emulator.file('orders.yaml'), api_version_id: 'ver_101' });
    await control.control('clock', { advanceMs: 300_000 });
    expect((await get('imp_0002')).body?.status).toBe('in_progress');
    await control.control('clock', { advanceMs: 300_000 });
    expect((await get('imp_0002')).body).toMatchObject({ status: 'completed', message: 'Imported 2 paths of "Orders" 2.1.0 into version ver_101 (overwritten)' });
    expect((await get('imp_0001')).body).toMatchObject({ status: 'completed', message: 'Imported 2 paths of "Orders" 2.1.0 into new version ver_300' });
    // The key is masked in the request log.
    expect((await control.requests()).every((request) => request.query.apikey === '[REDACTED]')).toBe(true);
  });

  it('refuses a missing or unknown key, missing parameters, another import type and a relative location, in JSON:API form in the real dialect', async () => {
    expect(await call('GET', '/v1/imports/imp_0001')).toMatchObject({ status: 401, body: { message: 'An API key is required: pass it as the apikey query parameter' } });
    await control.dialect('real');
    expect(await call('GET', '/v1/imports/imp_0001')).toMatchObject({ status: 401, body: { errors: [{ status: 401, title: 'Unauthorized', source: { parameter: 'apikey' } }] } });
    expect((await call('GET', '/v1/imports/imp_0001', { apikey: 'nope-nope-nope' })).status).toBe(401);
    expect(firstError((await post({ file_location: emulator.file('orders.yaml') })).body)).toMatchObject({ status: 400, source: { parameter: 'api_id' } });
    expect(firstError((await post({ api_id: 'api_1001' })).body)).toMatchObject({ status: 400, source: { parameter: 'file_location' } });
    expect(firstError((await post({ api_id: 'api_1001', file_location: emulator.file('orders.yaml'), import_type: 'raml' })).body)).toMatchObject({ status: 422, source: { parameter: 'import_type' } });
    expect(firstError((await post({ api_id: 'api_1001', file_location: 'orders.yaml' })).body)).toMatchObject({ status: 422, source: { parameter: 'file_location' } });
    expect(firstError((await post({ api_id: 'api_2001', file_location: emulator.file('orders.yaml') })).body)).toMatchObject({ status: 404, source: { parameter: 'api_id' } });
    expect((await get('imp_0404')).status).toBe(404);
  });

  it('fails a description without a base path only when no version is given, a broken one with the parser’s messages, and an unreachable one', async () => {
    await post({ api_id: 'api_1001', file_location: emulator.file('no-base-path.yaml') });
    await post({ api_id: 'api_1001', file_location: emulator.file('no-base-path.yaml'), api_version_id: 'ver_101' });
    await post({ api_id: 'api_1001', file_location: emulator.file('broken.yaml') });
    await post({ api_id: 'api_1001', file_location: 'http://127.0.0.1:1/gone.yaml' });
    await post({ api_id: 'api_1001', file_location: `${emulator.url}/__emulator/files/missing.yaml` });
    await control.control('clock', { advanceMs: 3000 });
    const [noBase, overwritten, broken, unreachable, missing] = await Promise.all(['imp_0001', 'imp_0002', 'imp_0003', 'imp_0004', 'imp_0005'].map(async (id) => (await get(id)).body));
    expect(noBase).toMatchObject({ status: 'failed', message: expect.stringContaining('names no base path') });
    expect(overwritten).toMatchObject({ status: 'completed', message: expect.stringContaining('into version ver_101 (overwritten)') });
    expect(broken).toMatchObject({ status: 'failed', message: expect.stringContaining("#/info must have required property 'version'") });
    expect(unreachable).toMatchObject({ status: 'failed', message: expect.stringContaining('Could not fetch the file at file_location') });
    expect(missing).toMatchObject({ status: 'failed', message: 'Could not fetch the file at file_location: it answered HTTP 404' });
  });

  it('answers imports and links as JSON:API resources in the real dialect, failures bare on request, and forces a status', async () => {
    await control.dialect('real');
    await control.control('bare-errors', { on: true });
    expect(await get('imp_0001')).toMatchObject({ status: 404, body: undefined });
    const created = await post({ api_id: 'api_1001', file_location: emulator.file('petstore.json') });
    expect(created.body).toMatchObject({ data: { type: 'imports', id: 'imp_0001', links: { self: expect.stringContaining('/v1/imports/imp_0001') } } });
    await control.control('imports/imp_0001', { status: 'queued' });
    expect((await get('imp_0001')).body).toMatchObject({ data: { type: 'imports', id: 'imp_0001', attributes: { import_type: 'swagger', status: 'queued' } } });
    await control.control('bare-errors', { on: false });
    expect(await get('imp_0404')).toMatchObject({ status: 404, body: { errors: [{ status: 404, detail: 'Import not found' }] } });
    await control.dialect('spec');
    expect(await get('imp_0404')).toMatchObject({ status: 404, body: { message: 'Import not found' } });
    expect((await control.control('bare-errors', { on: 'yes' })) as { message: string }).toMatchObject({ message: expect.stringContaining('expected') });
  });
});
