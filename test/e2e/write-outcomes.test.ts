import http from 'node:http';
import { afterAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { listen, readBody } from '../../lib/http.ts';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createRecognitionEmulator } from '../../emulators/recognition/emulator.ts';
import { createMarketplaceEmulator } from '../../emulators/marketplace/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { DEMO_APIKEY as IMPORTS_APIKEY } from '../../emulators/imports/data.ts';
import { createRestTransport } from '../../subgraphs/kit/transport.ts';
import { emulatorControl, startGatewayOver, startTestStack, type GraphQLResult } from '../support/stack.ts';
import { startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { waitUntil } from '../support/waitFor.ts';

/**
 * Writes whose outcome the service never told: QA12, defects 1 and 3. The emulators apply their
 * faults before their handlers, so "the service applied the write, then the answer was lost" is
 * made by a proxy of the test's own in front of an emulator: it forwards the request (the write
 * happens, and the emulator's request log shows its real answer), then answers 502 or 504, drops
 * the connection, or sends a body that is not JSON.
 */
type Break = 502 | 504 | 'drop' | 'garbage';
interface Rule {
  method: string;
  /** A path prefix. */
  path: string;
  mode: Break;
  times: number;
}

async function startBreakingProxy(target: string) {
  const rules: Rule[] = [];
  /** One fresh connection per request: a socket the emulator dropped is never reused. */
  const forward = (req: http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; answer: Buffer }>((resolve, reject) => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)));
      const upstream = http.request(new URL(req.url!, target), { method: req.method, agent: false, headers: { ...headers, 'content-length': String(body.length) } }, (response) => {
        readBody(response, 16 * 1024 * 1024).then((answer) => resolve({ status: response.statusCode!, headers: response.headers, answer }), reject);
      });
      upstream.once('error', reject);
      upstream.end(body);
    });
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req, 1024 * 1024);
    let upstream: Awaited<ReturnType<typeof forward>>;
    try {
      upstream = await forward(req, body);
    } catch {
      // The emulator dropped the connection (its own fault): so does the proxy.
      return void req.socket.destroy();
    }
    const { status, answer } = upstream;
    const rule = rules.find((candidate) => candidate.times > 0 && candidate.method === req.method && req.url!.startsWith(candidate.path));
    if (!rule) {
      const passed = Object.fromEntries(Object.entries(upstream.headers).filter(([name]) => !['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name)));
      res.writeHead(status, passed);
      return void res.end(answer);
    }
    rule.times -= 1;
    if (rule.mode === 'drop') return void req.socket.destroy();
    if (rule.mode === 'garbage') {
      res.writeHead(status, { 'content-type': 'application/json' });
      return void res.end('<html>oops');
    }
    res.writeHead(rule.mode, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'bad gateway' }));
  });
  const started = await listen(server, 0);
  afterAll(() => started.close());
  return {
    url: started.url,
    breakNext(rule: Omit<Rule, 'times'> & { times?: number }) {
      rules.push({ times: 1, ...rule });
    },
    clear() {
      rules.length = 0;
    },
  };
}

const recognitionEmulator = await startEmulator(createRecognitionEmulator(), 0);
const marketplaceEmulator = await startEmulator(createMarketplaceEmulator({ rateLimits: false }), 0);
afterAll(() => recognitionEmulator.close());
afterAll(() => marketplaceEmulator.close());
const recognitionProxy = await startBreakingProxy(recognitionEmulator.url);
const marketplaceProxy = await startBreakingProxy(marketplaceEmulator.url);
const recognition = emulatorControl(recognitionEmulator.url);
const marketplace = emulatorControl(marketplaceEmulator.url);

const TIMEOUT_MS = 800;
const t = await startTestStack({
  RECOGNITION_API_URL: recognitionProxy.url,
  MARKETPLACE_API_URL: marketplaceProxy.url,
  RECOGNITION_TIMEOUT_MS: String(TIMEOUT_MS),
  IMPORTS_TIMEOUT_MS: String(TIMEOUT_MS),
  // The failures made here on purpose would open recognition's breaker part way through the file.
  CIRCUIT_BREAKER_FAILURES: '0',
});
// Apollo's own executor, where the default gateway takes its single-fetch shortcut.
const apolloOnly = await startGatewayOver(t.stack, { GATEWAY_SINGLE_FETCH: 'off', GATEWAY_PASS_THROUGH: 'off' }, 'gateway-apollo-only');
const apolloGql = async (query: string, headers: Record<string, string>): Promise<GraphQLResult> => {
  const response = await fetch(apolloOnly.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });
  return (await response.json()) as GraphQLResult;
};

const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
const seller = { 'x-marketplace-email': DEMO_CREDENTIALS.email, 'x-marketplace-api-key': DEMO_CREDENTIALS.apiKey, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };
const everySecret = [...Object.values(DEMO_TOKENS), DEMO_CREDENTIALS.apiKey, DEMO_CREDENTIALS.accountKey, IMPORTS_APIKEY];

beforeEach(async () => {
  recognitionProxy.clear();
  marketplaceProxy.clear();
  for (const emulator of [recognition, marketplace]) {
    await emulator.reset();
    await emulator.clearRequests();
  }
});

const log = async (emulator: typeof recognition, method: string, prefix: string) =>
  (await emulator.requests()).filter((request) => request.method === method && request.path.startsWith(prefix)).map((request) => request.status);

async function createWebhook(url: string): Promise<string> {
  const created = await t.gql<{ createWebhook: { id: string } }>(`mutation { createWebhook(input: { url: "${url}" }) { id } }`, { headers: admin });
  expect(created.errors).toBeUndefined();
  await recognition.clearRequests();
  return created.data!.createWebhook.id;
}

const webhookIds = async () => ((await t.gql<{ webhooks: { id: string }[] }>('{ webhooks { id } }', { headers: admin })).data?.webhooks ?? []).map((webhook) => webhook.id);

function expectNoSecret(result: unknown): void {
  const text = JSON.stringify(result);
  for (const secret of everySecret) expect(text.includes(secret), 'a credential appeared in an error').toBe(false);
}

describe('a DELETE whose retry finds the resource gone after an attempt that went unanswered', () => {
  it('is the deletion it asked for when the first attempt was answered 502 (recognition deleteWebhook)', async () => {
    const id = await createWebhook('https://hooks.example/a');
    recognitionProxy.breakNext({ method: 'DELETE', path: '/api/v1/webhooks/', mode: 502 });
    const result = await t.gql(`mutation { deleteWebhook(id: "${id}") { id } }`, { headers: admin });
    expect(result).toEqual({ data: { deleteWebhook: { id } } });
    // The first attempt deleted it; the retry found nothing left to delete.
    expect(await log(recognition, 'DELETE', '/api/v1/webhooks/')).toEqual([200, 404]);
    expect(await webhookIds()).not.toContain(id);
  });

  it('is the deletion it asked for when the first attempt was answered 504 (recognition deleteApiKey)', async () => {
    const created = await t.gql('mutation { createApiKey(input: { label: "qa12" }) { success } }', { headers: admin });
    expect(created.errors).toBeUndefined();
    const keys = await t.gql<{ apiKeys: { id: string; label: string }[] }>('{ apiKeys { id label } }', { headers: admin });
    const id = keys.data!.apiKeys.find((key) => key.label === 'qa12')!.id;
    await recognition.clearRequests();
    recognitionProxy.breakNext({ method: 'DELETE', path: '/api/v1/api_keys/', mode: 504 });
    const result = await t.gql(`mutation { deleteApiKey(id: "${id}") { id success } }`, { headers: admin });
    expect(result).toEqual({ data: { deleteApiKey: { id, success: true } } });
    expect(await log(recognition, 'DELETE', '/api/v1/api_keys/')).toEqual([200, 404]);
  });

  it('is the ungrouping it asked for when the connection dropped after the service answered (marketplace ungroupLabelGroup)', async () => {
    marketplaceProxy.breakNext({ method: 'DELETE', path: '/shipments/', mode: 'drop' });
    const result = await t.gql('mutation { ungroupLabelGroup(id: "7002") { id message } }', { headers: seller });
    expect(result).toEqual({ data: { ungroupLabelGroup: { id: '7002', message: null } } });
    expect(await log(marketplace, 'DELETE', '/shipments/')).toEqual([200, 404]);
    const groups = await t.gql<{ labelGroups: { id: string }[] }>('{ labelGroups { id } }', { headers: seller });
    expect(groups.data!.labelGroups.map((group) => group.id)).not.toContain('7002');
  });

  it('is the deletion it asked for through Apollo executor too (marketplace deleteQuestion, 502)', async () => {
    marketplaceProxy.breakNext({ method: 'DELETE', path: '/questions/', mode: 502 });
    const result = await apolloGql('mutation { deleteQuestion(id: "ALPHA-100037") { id } }', seller);
    expect(result).toEqual({ data: { deleteQuestion: { id: 'ALPHA-100037' } } });
    expect(await log(marketplace, 'DELETE', '/questions/')).toEqual([204, 404]);
  });

  it('stays NOT_FOUND when the earlier attempt was refused with 503 (not handled: the 404 is the truth)', async () => {
    await recognition.fault({ path: '/api/v1/webhooks/wh_missing', method: 'DELETE', status: 503, times: 1 });
    const result = await t.gql('mutation { deleteWebhook(id: "wh_missing") { id } }', { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', service: 'recognition', status: 404 });
    expect(result.errors?.[0]?.extensions).not.toHaveProperty('writeOutcome');
    expect(await log(recognition, 'DELETE', '/api/v1/webhooks/')).toEqual([503, 404]);
  });

  it('stays NOT_FOUND on a first attempt answered 404', async () => {
    const result = await t.gql('mutation { deleteWebhook(id: "wh_missing") { id } }', { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', service: 'recognition', status: 404 });
    expect(result.errors?.[0]?.extensions).not.toHaveProperty('writeOutcome');
    expect(await log(recognition, 'DELETE', '/api/v1/webhooks/')).toEqual([404]);
  });
});

describe('a write whose outcome is unknown', () => {
  const mayHaveApplied = /recognition may have applied the write: read before sending it again/;

  it('says so when its connection broke after the request was sent, on both gateway paths', async () => {
    for (const gql of [(query: string) => t.gql(query, { headers: admin }), (query: string) => apolloGql(query, admin)]) {
      await recognition.clearRequests();
      recognitionProxy.breakNext({ method: 'POST', path: '/api/v1/webhooks', mode: 'drop' });
      const result = await gql('mutation { createWebhook(input: { url: "https://hooks.example/dropped" }) { id } }');
      expect(result.data).toEqual({ createWebhook: null });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition', writeOutcome: 'UNKNOWN' });
      expect(result.errors?.[0]?.message).toMatch(mayHaveApplied);
      expect(result.errors?.[0]?.message).not.toMatch(/connection failed/);
      expectNoSecret(result);
      // Sent once, never repeated, and applied.
      expect(await log(recognition, 'POST', '/api/v1/webhooks')).toEqual([200]);
    }
    expect(await webhookIds()).toHaveLength(2);
  });

  it('says so when it timed out after being sent', async () => {
    await recognition.fault({ path: '/api/v1/webhooks', method: 'POST', latencyMs: TIMEOUT_MS + 400, times: 1 });
    const result = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/slow" }) { id } }', { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition', writeOutcome: 'UNKNOWN' });
    expect(result.errors?.[0]?.message).toMatch(new RegExp(`no answer within ${TIMEOUT_MS} ms.*${mayHaveApplied.source}`));
    expectNoSecret(result);
    // The service did it, after the deadline (and not in the next test's fresh state).
    await waitUntil(async () => (await log(recognition, 'POST', '/api/v1/webhooks'))[0] === 200, () => 'the late POST');
    expect(await webhookIds()).toHaveLength(1);
  });

  it('says so when a proxy in front answered 502 or 504 to a POST, keeping the status', async () => {
    for (const status of [502, 504] as const) {
      recognitionProxy.breakNext({ method: 'POST', path: '/api/v1/webhooks', mode: status });
      const result = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/proxied" }) { id } }', { headers: admin });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status, writeOutcome: 'UNKNOWN' });
      expect(result.errors?.[0]?.message).toMatch(mayHaveApplied);
    }
  });

  it('says so when an idempotent write spent its retries on connections that broke after sending', async () => {
    const id = await createWebhook('https://hooks.example/put');
    await recognition.fault({ path: `/api/v1/webhooks/${id}`, method: 'PUT', drop: true, times: 3 });
    const result = await t.gql(`mutation { updateWebhook(id: "${id}", input: { url: "https://hooks.example/put2" }) { id } }`, { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition', writeOutcome: 'UNKNOWN' });
    expect(result.errors?.[0]?.message).toMatch(mayHaveApplied);
    expect(await log(recognition, 'PUT', '/api/v1/webhooks/')).toHaveLength(3);
  });

  it('says it was applied when a 2xx answer is not JSON', async () => {
    recognitionProxy.breakNext({ method: 'POST', path: '/api/v1/webhooks', mode: 'garbage' });
    const result = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/garbled" }) { id } }', { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 200, writeOutcome: 'APPLIED' });
    expect(result.errors?.[0]?.message).toMatch(/recognition: the answer was not valid JSON.*recognition applied the write.*read before sending it again/);
    expect(await webhookIds()).toHaveLength(1);
  });

  it('says it was applied when a 2xx answer is over the size cap', async () => {
    const transport = createRestTransport({ service: 'recognition', baseUrl: `${recognitionEmulator.url}/api/v1`, maxResponseBytes: 8 });
    onTestFinished(() => transport.close());
    const call = { operation: 'createWebhook', method: 'POST', path: '/webhooks', headers: { authorization: `Bearer ${DEMO_TOKENS.admin}` }, body: { json: { url: 'https://hooks.example/large' } }, secrets: [DEMO_TOKENS.admin] } as const;
    const error = (await transport.request(call).catch((caught: unknown) => caught)) as { message: string; extensions?: Record<string, unknown> };
    expect(error.extensions).toEqual({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 200, writeOutcome: 'APPLIED' });
    expect(error.message).toMatch(/larger than the 8 bytes.*recognition applied the write/);
    // A read over the cap says nothing of the kind.
    const read = (await transport.request({ operation: 'listWebhooks', method: 'GET', path: '/webhooks', query: { access_token: DEMO_TOKENS.admin }, secrets: [DEMO_TOKENS.admin] }).catch((caught: unknown) => caught)) as { extensions?: Record<string, unknown> };
    expect(read.extensions).toEqual({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 200 });
  });

  it('keeps credentials out of the message when the credential travels in the query (imports)', async () => {
    const imports = t.emulator('imports');
    await imports.fault({ path: '/v1/imports', method: 'POST', latencyMs: TIMEOUT_MS + 400, times: 1 });
    const result = await t.gql(`mutation { createImport(input: { apiId: "api_1001", fileLocation: "${imports.url}/__emulator/files/petstore.json" }) { id } }`, {
      headers: { 'x-imports-apikey': IMPORTS_APIKEY },
    });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'imports', writeOutcome: 'UNKNOWN' });
    expect(result.errors?.[0]?.message).toMatch(/imports may have applied the write/);
    expectNoSecret(result);
    await waitUntil(async () => (await imports.requests()).some((request) => request.method === 'POST' && request.path === '/v1/imports' && request.status !== 0), () => 'the late POST');
  });
});

describe('what carries no writeOutcome', () => {
  it('a read, whatever happened to it', async () => {
    await recognition.fault({ path: '/api/v1/webhooks', method: 'GET', drop: true, times: 3 });
    const dropped = await t.gql('{ webhooks { id } }', { headers: admin });
    expect(dropped.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
    expect(dropped.errors?.[0]?.extensions).not.toHaveProperty('writeOutcome');
    recognitionProxy.breakNext({ method: 'GET', path: '/api/v1/webhooks', mode: 'garbage' });
    const garbled = await t.gql('{ webhooks { id } }', { headers: admin });
    expect(garbled.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 200 });
    expect(garbled.errors?.[0]?.extensions).not.toHaveProperty('writeOutcome');
  });

  it('a write answered 503: the service did not handle it', async () => {
    await recognition.fault({ path: '/api/v1/webhooks', method: 'POST', status: 503, times: 1 });
    const result = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/refused" }) { id } }', { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition', status: 503 });
    expect(result.errors?.[0]?.extensions).not.toHaveProperty('writeOutcome');
  });

  it('a write whose connection was refused: nothing was sent', async () => {
    const closed = await listen(http.createServer(), 0);
    await closed.close();
    const subgraph = await startRecognitionSubgraph(closed.url, { timeoutMs: TIMEOUT_MS });
    onTestFinished(() => subgraph.close());
    const gateway = await startRecognitionGateway(subgraph.graphqlUrl);
    onTestFinished(() => gateway.close());
    const response = await fetch(gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin },
      body: JSON.stringify({ query: 'mutation { createWebhook(input: { url: "https://hooks.example/never" }) { id } }' }),
    });
    const result = (await response.json()) as GraphQLResult;
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
    expect(result.errors?.[0]?.extensions).not.toHaveProperty('writeOutcome');
    expect(result.errors?.[0]?.message).toMatch(/connection failed \(ECONNREFUSED\)/);
  });

  it('a write whose deadline passed while it waited for a connection: nothing was sent', async () => {
    const transport = createRestTransport({ service: 'recognition', baseUrl: `${recognitionEmulator.url}/api/v1`, connections: 1, timeoutMs: 3000 });
    onTestFinished(() => transport.close());
    await recognition.fault({ path: '/api/v1/analytics/trends', method: 'GET', latencyMs: 600, times: 1 });
    const auth = { authorization: `Bearer ${DEMO_TOKENS.admin}` };
    // The only connection is busy with a slow read; the write's own deadline passes in the queue.
    const read = transport.request({ operation: 'getTrends', method: 'GET', path: '/analytics/trends', query: { access_token: DEMO_TOKENS.admin }, secrets: [DEMO_TOKENS.admin] });
    const write = await transport
      .request({ operation: 'createWebhook', method: 'POST', path: '/webhooks', headers: auth, body: { json: { url: 'https://hooks.example/queued' } }, secrets: [DEMO_TOKENS.admin], timeoutMs: 200 })
      .then(
        () => undefined,
        (error: unknown) => error as { extensions?: Record<string, unknown> },
      );
    await read;
    expect(write?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
    expect(write?.extensions).not.toHaveProperty('writeOutcome');
    expect(await log(recognition, 'POST', '/api/v1/webhooks')).toEqual([]);
  });
});
