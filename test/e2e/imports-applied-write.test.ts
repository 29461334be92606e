import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_APIKEY } from '../../emulators/imports/data.ts';
import { startImportsSlice } from '../support/importsPieces.ts';
import { DIALECTS, type GraphQLResult } from '../support/stack.ts';

// createImport is a POST (never repeated) followed by a read of the new job: when only the read
// fails, the job exists and runs, so the client must learn its id and not send the mutation again.
const slice = await startImportsSlice();
// A second subgraph with a short deadline, so a read-back that hangs times out quickly.
const hasty = await startImportsSlice({ timeoutMs: 400 });
const auth = { 'x-imports-apikey': DEMO_APIKEY };

const CREATE = 'mutation ($input: CreateImportInput!) { createImport(input: $input) { id status } }';
type Created = GraphQLResult<{ createImport: { id: string; status: string } | null }>;
const create = (gateway: typeof slice.gateway, fileLocation: string): Promise<Created> =>
  gateway.gql(CREATE, { variables: { input: { apiId: 'api_1001', fileLocation } }, headers: auth });
const calls = async (control: typeof slice.emulator.control) => (await control.requests()).map((request) => `${request.method} ${request.path} ${request.status}`);
const jobs = async (url: string) => ((await (await fetch(`${url}/__emulator/imports`)).json()) as { id: string }[]).map((job) => job.id);

/** What every such failure says, whatever the read's own failure was. */
function expectAppliedButUnread(result: Created, cause: Record<string, unknown>) {
  expect(result.data).toEqual({ createImport: null });
  expect(result.errors).toHaveLength(1);
  const [error] = result.errors!;
  expect(error!.path).toEqual(['createImport']);
  expect(error!.extensions).toMatchObject({ ...cause, service: 'imports', writeOutcome: 'APPLIED', resourceId: 'imp_0001' });
  expect(error!.message).toMatch(/^imports: the service started the import imp_0001, but reading it back failed \(.+\)\. Do not send the mutation again/);
  expect(error!.message).toContain('importStatusChanged(id: "imp_0001")');
  expect(error!.message).toContain('import(id: "imp_0001")');
  expect(JSON.stringify(result)).not.toContain(DEMO_APIKEY);
}

describe.each(DIALECTS)('a createImport whose read-back fails, %s dialect', (dialect) => {
  beforeEach(async () => {
    for (const { emulator } of [slice, hasty]) {
      await emulator.control.reset();
      await emulator.control.dialect(dialect);
      // A new job stays IN_PROGRESS whatever the machine's load: the 3 s default could pass before the read-back below.
      await emulator.control.control('processing', { ms: 3_600_000 });
    }
  });

  it('says the import was started and names its id when the link answers 503 on every attempt; the job can then be read', async () => {
    const { emulator, gateway } = slice;
    await emulator.control.fault({ path: '/v1/imports/*', method: 'GET', status: 503, times: 3 });
    expectAppliedButUnread(await create(gateway, emulator.file('petstore.json')), { code: 'UPSTREAM_ERROR', status: 503 });
    // One POST only; the read is a GET, retried by the transport as every read.
    expect(await calls(emulator.control)).toEqual(['POST /v1/imports 202', 'GET /v1/imports/imp_0001 503', 'GET /v1/imports/imp_0001 503', 'GET /v1/imports/imp_0001 503']);
    expect(await jobs(emulator.url)).toEqual(['imp_0001']);
    // What the error tells the client to do works.
    const read = await gateway.gql<{ import: { id: string; status: string } }>('{ import(id: "imp_0001") { id status } }', { headers: auth });
    expect(read).toEqual({ data: { import: { id: 'imp_0001', status: 'IN_PROGRESS' } } });
  });

  it('keeps 404 from the link as the cause, still naming the started import', async () => {
    const { emulator, gateway } = slice;
    await emulator.control.fault({ path: '/v1/imports/imp_0001', method: 'GET', status: 404, times: 1 });
    expectAppliedButUnread(await create(gateway, emulator.file('petstore.json')), { code: 'UPSTREAM_ERROR', status: 404 });
    expect(await calls(emulator.control)).toEqual(['POST /v1/imports 202', 'GET /v1/imports/imp_0001 404']);
    expect(await jobs(emulator.url)).toEqual(['imp_0001']);
  });

  it('keeps UPSTREAM_UNAVAILABLE when the read times out, still naming the started import', async () => {
    const { emulator, gateway } = hasty;
    await emulator.control.fault({ path: '/v1/imports/*', method: 'GET', latencyMs: 1500, times: 1 });
    const result = await create(gateway, emulator.file('petstore.json'));
    expectAppliedButUnread(result, { code: 'UPSTREAM_UNAVAILABLE' });
    expect(result.errors![0]!.extensions).not.toHaveProperty('status');
    expect((await calls(emulator.control)).slice(0, 2)).toEqual(['POST /v1/imports 202', expect.stringMatching(/^GET \/v1\/imports\/imp_0001 /)]);
    expect(await jobs(emulator.url)).toEqual(['imp_0001']);
  });

  it('answers the job as usual when a retried read succeeds', async () => {
    const { emulator, gateway } = slice;
    await emulator.control.fault({ path: '/v1/imports/*', method: 'GET', status: 503, times: 1 });
    expect(await create(gateway, emulator.file('petstore.json'))).toEqual({ data: { createImport: { id: 'imp_0001', status: 'IN_PROGRESS' } } });
    expect(await calls(emulator.control)).toEqual(['POST /v1/imports 202', 'GET /v1/imports/imp_0001 503', 'GET /v1/imports/imp_0001 200']);
  });
});
