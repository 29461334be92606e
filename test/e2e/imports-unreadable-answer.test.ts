import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_APIKEY } from '../../emulators/imports/data.ts';
import { startImportsSlice } from '../support/importsPieces.ts';
import { DIALECTS } from '../support/stack.ts';

// A 2xx to `POST /imports` is an import the service accepted and runs. When that answer is neither
// a link nor the import, its id cannot be read: the error must still say the import was started,
// or a client that sends the mutation again starts a second job.
const { emulator, gateway } = await startImportsSlice();
const auth = { 'x-imports-apikey': DEMO_APIKEY };
const CREATE = 'mutation ($input: CreateImportInput!) { createImport(input: $input) { id status } }';

describe.each(DIALECTS)('a createImport whose accepting answer names no readable id, %s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.control.reset();
    await emulator.control.dialect(dialect);
  });

  it.each([
    ['a 202 that is not a link', 202, { id: 'imp_0002' }],
    ['a 202 without a body', 202, undefined],
    ['a 201 that is neither a link nor an import', 201, { data: { type: 'imports' } }],
    // An id no path segment may hold would be copied whole into the error, twice.
    ['a 202 link whose id is 100,000 characters', 202, { type: 'imports', id: 'i'.repeat(100_000), links: { self: '/v1/imports/x' } }],
  ])('%s is UPSTREAM_ERROR with writeOutcome APPLIED and no resourceId', async (_name, status, body) => {
    await emulator.control.fault({ path: '/v1/imports', method: 'POST', status, ...(body ? { body } : {}), times: 1 });
    const result = await gateway.gql(CREATE, { variables: { input: { apiId: 'api_1001', fileLocation: emulator.file('petstore.json') } }, headers: auth });
    expect(result.data).toEqual({ createImport: null });
    expect(result.errors).toHaveLength(1);
    const [error] = result.errors!;
    expect(error!.path).toEqual(['createImport']);
    expect(error!.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'imports', status, writeOutcome: 'APPLIED' });
    expect(error!.extensions).not.toHaveProperty('resourceId');
    expect(error!.message).toMatch(/^imports: the service started the import, but its id could not be read from its answer \(.+\)\. Do not send the mutation again/);
    // Only the POST: with no id there is nothing to read.
    expect((await emulator.control.requests()).map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual([`POST /v1/imports ${status}`]);
    expect(JSON.stringify(result)).not.toContain(DEMO_APIKEY);
    expect(error!.message.length).toBeLessThan(1_000);
  });
});
