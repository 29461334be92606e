import { describe, expect, it } from 'vitest';
import { DEMO_APIKEY, OTHER_APIKEY } from '../../emulators/imports/data.ts';
import { capturedLogs, knownSecrets } from '../support/logs.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';
import { subscribeWs } from '../support/subscribers.ts';

// The whole stack, as `npm start` wires it; a short deadline so that a slow answer is a timeout.
const t = await startTestStack({ IMPORTS_TIMEOUT_MS: '3000' });
const emulator = t.emulator('imports');
const imports = t.stack.services.find((service) => service.name === 'imports')!;
const file = (name: string) => `${imports.emulatorUrl}/__emulator/files/${name}`;

describe('the imports API key travels in the URL, and nowhere else', () => {
  it('appears in no log line, error, metric or request log, whatever goes wrong', async () => {
    const wrong = 'wrong-imports-apikey-6b5a4c3d2e';
    knownSecrets.add(wrong);
    const auth = { 'x-imports-apikey': DEMO_APIKEY };
    const create = (headers: Record<string, string>, fileLocation = file('petstore.json')) =>
      t.gql('mutation ($input: CreateImportInput!) { createImport(input: $input) { id status message } }', { variables: { input: { apiId: 'api_1001', fileLocation } }, headers });
    const read = (id: string, headers: Record<string, string> = auth) => t.gql('query ($id: ID!) { import(id: $id) { id status } }', { variables: { id }, headers });

    const responses: GraphQLResult<unknown>[] = [];
    responses.push(await create(auth));
    // The service hands out a link that carries the key: it is followed without its query.
    await emulator.fault({ path: '/v1/imports', method: 'POST', status: 202, body: { type: 'imports', id: 'imp_0001', links: { self: `${imports.emulatorUrl}/v1/imports/imp_0001?apikey=${DEMO_APIKEY}` } }, times: 1 });
    responses.push(await create(auth));
    // Upstreams echo what they were sent: the key in a message, in a JSON:API detail, in a plain text body.
    await emulator.fault({ path: '/v1/imports/imp_0001', method: 'GET', status: 500, body: { message: `failed GET /v1/imports/imp_0001?apikey=${DEMO_APIKEY}` }, times: 1 });
    responses.push(await read('imp_0001'));
    await emulator.fault({ path: '/v1/imports', method: 'POST', status: 400, body: { errors: [{ status: 400, detail: `apikey ${DEMO_APIKEY} may not import`, source: { parameter: 'apikey' } }] }, times: 1 });
    responses.push(await create(auth));
    await emulator.fault({ path: '/v1/imports/imp_0001', method: 'GET', status: 502, raw: `upstream said: apikey=${DEMO_APIKEY}`, times: 3 });
    responses.push(await read('imp_0001'));
    // A timeout, a dropped connection, a refused key, a file the service cannot fetch.
    await emulator.fault({ path: '/v1/imports/imp_0001', method: 'GET', latencyMs: 3600, times: 1 });
    responses.push(await read('imp_0001'));
    await emulator.fault({ path: '/v1/imports/imp_0001', method: 'GET', drop: true, times: 3 });
    responses.push(await read('imp_0001'));
    responses.push(await read('imp_0001', { 'x-imports-apikey': wrong }));
    responses.push(await read('imp_0001', { 'x-imports-apikey': OTHER_APIKEY }));
    responses.push(await create(auth, 'http://127.0.0.1:1/unreachable.yaml'));

    // Subscriptions: refused keys, and one that follows the job.
    for (const key of [wrong, OTHER_APIKEY, DEMO_APIKEY]) {
      const watcher = subscribeWs(t.graphqlUrl, 'subscription { importStatusChanged(id: "imp_0001") { status } }', { connectionParams: { 'x-imports-apikey': key } });
      await watcher.waitFor(1);
      responses.push(...(watcher.results as GraphQLResult<unknown>[]));
      watcher.close();
    }

    // The scenario exercised what it claims to.
    const codes = responses.flatMap((response) => response.errors ?? []).map((error) => error.extensions?.code);
    expect(codes).toEqual(['UPSTREAM_ERROR', 'BAD_USER_INPUT', 'UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE', 'UNAUTHENTICATED', 'UNAUTHENTICATED', 'NOT_FOUND']);
    const requests = await emulator.requests();
    expect(requests.filter((request) => request.query.apikey === '[REDACTED]').length).toBeGreaterThan(10);
    // The link's own query was dropped: the key went once, as the parameter the client adds.
    expect(requests[3]).toMatchObject({ method: 'GET', path: '/v1/imports/imp_0001', query: { apikey: '[REDACTED]' } });
    const log = capturedLogs.join('');
    expect(log).toContain('upstream call failed');

    const texts = {
      responses: JSON.stringify(responses),
      log,
      gatewayMetrics: await (await fetch(`${t.stack.gateway.url}/metrics`)).text(),
      subgraphMetrics: await (await fetch(imports.subgraphUrl.replace('/graphql', '/metrics'))).text(),
      emulatorLog: JSON.stringify(requests),
    };
    for (const secret of knownSecrets) {
      for (const [where, text] of Object.entries(texts)) expect(text.includes(secret), `a key in ${where}`).toBe(false);
    }
    // The echoed key was scrubbed from the messages passed on, not dropped with them.
    expect(texts.responses).toContain('[REDACTED]');
  });
});

describe('the imports API key is masked in every form an upstream echoes it in', () => {
  it('upper-cased, and with characters percent-encoded beyond need (`-` as %2D or %2d)', async () => {
    const everyByte = [...Buffer.from(DEMO_APIKEY)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    const echoes = [DEMO_APIKEY.toUpperCase(), DEMO_APIKEY.replace(/-/g, '%2D'), DEMO_APIKEY.replace(/-/g, '%2d').toUpperCase(), everyByte];
    await emulator.fault({ path: '/v1/imports/imp_0001', method: 'GET', status: 502, body: { message: `rejected: ${echoes.join(' | ')}` }, times: 3 });
    const result = await t.gql('query ($id: ID!) { import(id: $id) { id } }', { variables: { id: 'imp_0001' }, headers: { 'x-imports-apikey': DEMO_APIKEY } });
    const error = result.errors![0]!;
    expect(error.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'imports', status: 502 });
    // Every echo masked where it stood, the upstream's own words kept.
    expect(error.message).toContain(`rejected: ${Array.from(echoes, () => '[REDACTED]').join(' | ')}`);
    // Read back the way a person would: in one case, percent-decoded (byte by byte: the key is ASCII).
    const normalised = (text: string) => text.replace(/%([0-9a-f]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))).toLowerCase();
    for (const [where, text] of [['response', JSON.stringify(result)], ['logs', capturedLogs.join('')]] as const) {
      expect(normalised(text).includes(DEMO_APIKEY.toLowerCase()), `a key in the ${where}`).toBe(false);
    }
  });
});
