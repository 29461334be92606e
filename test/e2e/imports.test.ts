import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_APIKEY, OTHER_APIKEY } from '../../emulators/imports/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startImportsSlice } from '../support/importsPieces.ts';
import { DIALECTS, type GraphQLResult } from '../support/stack.ts';

const { emulator, gateway } = await startImportsSlice();
const control = emulator.control;
const auth = { 'x-imports-apikey': DEMO_APIKEY };

/** Jobs finish when a test moves the emulator's clock, never because real time passed. */
const PROCESSING_MS = 600_000;
beforeEach(async () => {
  await control.reset();
  await control.control('processing', { ms: PROCESSING_MS });
});

const IMPORT_FIELDS = 'id type status statusText final message messages';
const CREATE = `mutation ($input: CreateImportInput!) { createImport(input: $input) { ${IMPORT_FIELDS} } }`;
const create = (input: Record<string, unknown>, headers: Record<string, string> = auth) => gateway.gql<{ createImport: Record<string, unknown> }>(CREATE, { variables: { input }, headers });
const read = (id: string, headers: Record<string, string> = auth) => gateway.gql<{ import: Record<string, unknown> | null }>(`query ($id: ID!) { import(id: $id) { ${IMPORT_FIELDS} } }`, { variables: { id }, headers });
const firstError = (result: GraphQLResult<unknown>) => result.errors?.[0];
const calls = async () => (await control.requests()).map((request) => `${request.method} ${request.path}`);

describe.each(DIALECTS)('imports, %s dialect', (dialect) => {
  beforeEach(async () => {
    await control.dialect(dialect);
  });

  it('creates an import with import_type=swagger and reads it once through its link', async () => {
    const result = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    expect(result).toEqual({
      data: { createImport: { id: 'imp_0001', type: 'swagger', status: 'IN_PROGRESS', statusText: 'in_progress', final: false, message: '', messages: [] } },
    });
    const requests = await control.requests();
    expect(requests.map((request) => [request.method, request.path, request.status])).toEqual([
      ['POST', '/v1/imports', 202],
      ['GET', '/v1/imports/imp_0001', 200],
    ]);
    // The key travels as the `apikey` query parameter (masked in the log), never as a header.
    expect(requests[0]!.query).toEqual({ apikey: '[REDACTED]', api_id: 'api_1001', import_type: 'swagger', file_location: emulator.file('petstore.json') });
    expect(requests[0]!.headers).not.toContain('x-imports-apikey');
    expect(requests[1]!.query).toEqual({ apikey: '[REDACTED]' });
  });

  it('sends file_location URL-encoded exactly once, and api_version_id when given', async () => {
    // Already-encoded characters in the caller's URL must arrive as the caller wrote them, not decoded or encoded twice.
    const location = `${emulator.file('orders.yaml')}?name=my%20api&tag=a+b&x=%2F`;
    const result = await create({ apiId: 'api_1001', fileLocation: location, apiVersionId: 'ver_101' });
    expect(result.errors).toBeUndefined();
    const [post] = await control.requests();
    expect(post!.query.file_location).toBe(location);
    expect(post!.query.api_version_id).toBe('ver_101');
  });

  it('reads an import by id, null (no error) when absent or another account’s, and the job moves on the emulator clock', async () => {
    await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    expect((await read('imp_0001')).data!.import).toMatchObject({ id: 'imp_0001', status: 'IN_PROGRESS' });
    await control.control('clock', { advanceMs: PROCESSING_MS });
    const done = await read('imp_0001');
    expect(done.data!.import).toMatchObject({ status: 'COMPLETED', statusText: 'completed', final: true });
    expect(done.data!.import!.message).toMatch(/^Imported 2 paths of "Pet store" 1.0.0 into new version ver_300/);
    expect(await read('imp_9999')).toEqual({ data: { import: null } });
    // An id that would move the path is refused before any call.
    expect(firstError(await read('..'))?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id' });
    expect(await read('imp_0001', { 'x-imports-apikey': OTHER_APIKEY })).toEqual({ data: { import: null } });
  });

  it('shows a status it does not know as OTHER with the service’s text, not as an error', async () => {
    await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    await control.control('imports/imp_0001', { status: 'Queued', message: 'waiting for a worker' });
    expect((await read('imp_0001')).data!.import).toMatchObject({ status: 'OTHER', statusText: 'Queued', final: false, messages: ['waiting for a worker'] });
  });

  it('refuses a missing key, and a file location that is not an absolute http(s) URL, before any call', async () => {
    const anonymous = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') }, {});
    expect(firstError(anonymous)?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'imports' });
    expect(firstError(await read('imp_0001', {}))?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    for (const fileLocation of [`https://files.example/${'a'.repeat(2048)}.yaml`, 'ftp://files.example/api.yaml', 'api.yaml', '/__emulator/files/petstore.json', '', 'javascript:alert(1)']) {
      const result = await create({ apiId: 'api_1001', fileLocation });
      expect(firstError(result)?.extensions, fileLocation).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.fileLocation' });
    }
    expect(firstError(await create({ apiId: ' ', fileLocation: emulator.file('petstore.json') }))?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.apiId' });
    expect(await calls()).toEqual([]);
  });

  describe.each([false, true])('upstream failures (bare status, empty body: %s)', (bare) => {
    beforeEach(async () => {
      await control.control('bare-errors', { on: bare });
    });

    it('maps a refused key to UNAUTHENTICATED and an unknown API or version to NOT_FOUND', async () => {
      const wrongKey = 'wrong-imports-apikey-0a9b8c7d';
      knownSecrets.add(wrongKey);
      const refused = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') }, { 'x-imports-apikey': wrongKey });
      expect(firstError(refused)?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'imports', status: 401 });
      expect(firstError(await read('imp_0001', { 'x-imports-apikey': wrongKey }))?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
      const unknownApi = await create({ apiId: 'api_2001', fileLocation: emulator.file('petstore.json') });
      expect(firstError(unknownApi)?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      const unknownVersion = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json'), apiVersionId: 'ver_999' });
      expect(firstError(unknownVersion)?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      if (!bare) expect(firstError(unknownVersion)?.message).toBe('imports: API api_1001 has no version ver_999');
      else expect(firstError(unknownVersion)?.message).toBe('imports: not found');
    });

    it('maps a rate limit to RATE_LIMITED with Retry-After', async () => {
      await control.control('rate-limit', { times: 1, retryAfterSeconds: 7 });
      const result = await read('imp_0001');
      expect(firstError(result)?.extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 7 });
    });
  });

  it('reads a JSON:API refusal naming a parameter as BAD_USER_INPUT on the matching argument', async () => {
    await control.fault({
      path: '/v1/imports',
      method: 'POST',
      status: 422,
      body: { errors: [{ status: '422', title: 'Unprocessable Entity', detail: 'file_location could not be reached', source: { parameter: 'file_location' } }] },
      times: 1,
    });
    const result = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    expect(firstError(result)?.message).toBe('imports: file_location could not be reached');
    expect(firstError(result)?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      status: 422,
      argument: 'input.fileLocation',
      fieldErrors: [{ field: 'input.fileLocation', messages: ['file_location could not be reached'] }],
    });
  });

  it('maps a bare 5xx to UPSTREAM_ERROR, and a POST is not retried', async () => {
    await control.fault({ path: '/v1/imports', method: 'POST', status: 503, times: 1 });
    const result = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    expect(firstError(result)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', status: 503 });
    expect(await calls()).toEqual(['POST /v1/imports']);
  });

  it('treats a 2xx of the wrong shape as UPSTREAM_ERROR, at the client boundary', async () => {
    await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    await control.fault({ path: '/v1/imports/imp_0001', method: 'GET', status: 200, body: { id: 'imp_0001', state: 'done' }, times: 1 });
    expect(firstError(await read('imp_0001'))?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'imports', status: 200 });
    await control.fault({ path: '/v1/imports', method: 'POST', status: 202, body: { id: 'imp_0002' }, times: 1 });
    const linkless = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    expect(firstError(linkless)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', status: 202 });
  });

  it('takes an answer that is the import itself, instead of a link, without reading it again', async () => {
    await control.fault({ path: '/v1/imports', method: 'POST', status: 201, body: { id: 'imp_0042', type: 'swagger', status: 'in_progress', message: null }, times: 1 });
    const result = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    expect(result).toEqual({ data: { createImport: { id: 'imp_0042', type: 'swagger', status: 'IN_PROGRESS', statusText: 'in_progress', final: false, message: null, messages: [] } } });
    expect(await calls()).toEqual(['POST /v1/imports']);
  });

  it('shows a description without a base path, imported without a version, failed', async () => {
    const created = await create({ apiId: 'api_1002', fileLocation: emulator.file('no-base-path.yaml') });
    expect(created.data!.createImport).toMatchObject({ id: 'imp_0001', type: 'swagger', status: 'IN_PROGRESS' });
    await control.control('clock', { advanceMs: PROCESSING_MS });
    const failed = await read('imp_0001');
    expect(failed.data!.import).toMatchObject({ status: 'FAILED', final: true });
    expect(failed.data!.import!.message).toContain('names no base path');
  });

  it('never follows a link that points outside the service (the key is in the URL)', async () => {
    await control.fault({ path: '/v1/imports', method: 'POST', status: 202, body: { type: 'imports', id: 'imp_0001', links: { self: 'https://elsewhere.example/v1/imports/imp_0001' } }, times: 1 });
    const result = await create({ apiId: 'api_1001', fileLocation: emulator.file('petstore.json') });
    // The fault answered without creating anything: the read by id (on the service itself) finds nothing.
    expect(firstError(result)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(await calls()).toEqual(['POST /v1/imports', 'GET /v1/imports/imp_0001']);
  });
});
