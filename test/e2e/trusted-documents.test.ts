import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StartedGateway } from '../../gateway/server.ts';
import { capturedLogs } from '../support/logs.ts';
import { startGatewayOver, startTestStack } from '../support/stack.ts';
import { TRANSPORTS, type WireOutcome } from '../support/transports.ts';
import { scrapeMetrics } from '../support/metrics.ts';

/**
 * Trusted documents and automatic persisted queries, held to one rule on every transport: HTTP
 * POST and GET, SSE and graphql-ws. The stack's own gateway has no manifest (off); gateways in
 * `allow` and `enforce` run beside it on the same subgraphs.
 */
const t = await startTestStack();
const headers = t.stack.demoHeaders;
const recognition = t.emulator('recognition');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const CATALOG = 'query Catalog { rewardCatalog { name } }';
const TRENDS = 'query Trends { hashtagTrends { hashtag } }';
const UNLISTED = 'query Unlisted { rewardCatalog { name rewards { name } } }';

const folder = mkdtempSync(join(tmpdir(), 'trusted-documents-'));
const write = (name: string, content: string) => {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
};
const apolloManifest = write(
  'apollo.json',
  JSON.stringify({
    format: 'apollo-persisted-query-manifest',
    version: 1,
    operations: [
      { id: sha256(CATALOG), name: 'Catalog', type: 'query', body: CATALOG },
      { id: sha256(TRENDS), name: 'Trends', type: 'query', body: TRENDS },
    ],
  }),
);
// graphql-codegen's client preset writes a map of hash to body (SHA-1 unless told otherwise).
const codegenManifest = write('persisted-documents.json', JSON.stringify({ [sha256(CATALOG)]: CATALOG, [createHash('sha1').update(TRENDS).digest('hex')]: TRENDS }));

const gatewayWith = (env: Record<string, string>): Promise<StartedGateway> => startGatewayOver(t.stack, env, 'trusted-gateway');
const gateways = {
  off: t.stack.gateway,
  allow: await gatewayWith({ TRUSTED_DOCUMENTS_MANIFEST: codegenManifest }),
  enforce: await gatewayWith({ TRUSTED_DOCUMENTS: 'enforce', TRUSTED_DOCUMENTS_MANIFEST: apolloManifest }),
};

/** GET with the operation in the query string, as Apollo clients send hashed queries. */
async function overGet(url: string, params: Record<string, unknown>, requestHeaders: Record<string, string>): Promise<WireOutcome> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  const response = await fetch(`${url}?${search}`, { headers: { 'apollo-require-preflight': 'true', ...requestHeaders } });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as WireOutcome['body'], text };
}

const SEND = { post: TRANSPORTS.http, get: overGet, sse: TRANSPORTS.sse, multipart: TRANSPORTS.multipart, ws: TRANSPORTS.ws } as const;
type Transport = keyof typeof SEND;
const EVERY_TRANSPORT = Object.keys(SEND) as Transport[];

/** graphql-ws wants a string `query`: an operation sent by id carries an empty one. */
const send = (transport: Transport, gateway: StartedGateway, payload: Record<string, unknown>) =>
  SEND[transport](gateway.graphqlUrl, transport === 'ws' ? { query: '', ...payload } : payload, headers);
const byHash = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
const codeOf = (outcome: WireOutcome) => outcome.body?.errors?.[0]?.extensions?.code;
/** The HTTP status each transport answers an unknown APQ hash with: Apollo Server's 200 on plain HTTP. */
const NOT_FOUND_STATUS: Record<Transport, number> = { post: 200, get: 200, sse: 404, multipart: 404, ws: 0 };
/** A refusal's status on a transport; graphql-ws answers in an `error` message on an open socket. */
const refusalStatus = (transport: Transport, status: number) => (transport === 'ws' ? 0 : status);

function expectData(outcome: WireOutcome, key = 'rewardCatalog') {
  expect(outcome.body?.errors, outcome.text.slice(0, 300)).toBeUndefined();
  expect((outcome.body?.data as Record<string, unknown> | undefined)?.[key]).toBeTruthy();
}

async function metric(gateway: StartedGateway, name: string, outcome: string): Promise<number> {
  const text = await scrapeMetrics(`${gateway.url}/metrics`);
  return Number(new RegExp(`^${name}\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** Sends what must be refused and shows that no upstream call followed. */
async function withoutUpstreamCalls(act: () => Promise<WireOutcome>): Promise<WireOutcome> {
  await recognition.clearRequests();
  const outcome = await act();
  expect(await recognition.requests()).toEqual([]);
  return outcome;
}

describe.each(['off', 'allow'] as const)('automatic persisted queries with trusted documents %s', (mode) => {
  it.each(EVERY_TRANSPORT)('go hash first, then hash and text, then hash alone over %s', async (transport) => {
    const gateway = gateways[mode];
    // A text of its own per mode and transport, so the cache is cold.
    const text = `query Apq { rewardCatalog { name } } # ${mode} ${transport}`;
    const hash = sha256(text);
    const miss = await send(transport, gateway, byHash(hash));
    expect(codeOf(miss)).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(miss.body?.errors?.[0]?.message).toBe('PersistedQueryNotFound');
    expect(miss.status).toBe(NOT_FOUND_STATUS[transport]);
    expectData(await send(transport, gateway, { query: text, ...byHash(hash) }));
    expectData(await send(transport, gateway, byHash(hash)));
  });
});

describe('automatic persisted queries', () => {
  it('answer an uncached hash over HTTP as Apollo Server does: 200, uncached', async () => {
    const response = await fetch(gateways.off.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(byHash(sha256('{ nothing }'))) });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('private, no-cache, must-revalidate');
    expect(await response.json()).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
  });

  it('serve a hit through the pass-through, without Apollo Server', async () => {
    const text = 'query ApqPassThrough { rewardCatalog { name } }';
    const passed = () => fetch(`${gateways.off.url}/metrics`).then(async (response) => Number(/^gateway_operations_passed_through_total\{type="query"\} (\d+)$/m.exec(await response.text())?.[1] ?? 0));
    expectData(await send('post', gateways.off, { query: text, ...byHash(sha256(text)) }));
    const before = await passed();
    expectData(await send('post', gateways.off, byHash(sha256(text))));
    expect((await passed()) - before).toBe(1);
  });

  it('refuse a text that is not the one its hash names', async () => {
    for (const transport of EVERY_TRANSPORT) {
      const outcome = await send(transport, gateways.off, { query: CATALOG, ...byHash(sha256(TRENDS)) });
      expect([codeOf(outcome), outcome.status], transport).toEqual(['BAD_REQUEST', refusalStatus(transport, 400)]);
    }
  });

  it.each(EVERY_TRANSPORT)('answer a malformed or huge persistedQuery extension over %s with BAD_REQUEST, nothing run', async (transport) => {
    const malformed = [
      { extensions: { persistedQuery: { version: 2, sha256Hash: sha256(CATALOG) } } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: 'x'.repeat(10_000) } } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: { $gt: '' } } } },
      { extensions: { persistedQuery: 'catalog' } },
      { documentId: ['a'] },
      { documentId: sha256(CATALOG), ...byHash(sha256(CATALOG)) },
    ];
    for (const payload of malformed) {
      for (const gateway of Object.values(gateways)) {
        const outcome = await withoutUpstreamCalls(() => send(transport, gateway, payload));
        expect([codeOf(outcome), outcome.status], JSON.stringify(payload).slice(0, 100)).toEqual(['BAD_REQUEST', refusalStatus(transport, 400)]);
      }
    }
  });

  it('keep the cache within its entries and bytes', async () => {
    const small = await gatewayWith({ APQ_CACHE_ENTRIES: '2', APQ_CACHE_MAX_BYTES: '4096' });
    const texts = [0, 1, 2].map((index) => `query Bounded${index} { rewardCatalog { name } }`);
    for (const text of texts) expectData(await send('post', small, { query: text, ...byHash(sha256(text)) }));
    // Two entries at most: the first went.
    expect(codeOf(await send('post', small, byHash(sha256(texts[0]!))))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expectData(await send('post', small, byHash(sha256(texts[2]!))));
    // A text larger than the whole cache is run, never kept.
    const large = `query Large { rewardCatalog { name } } # ${'x'.repeat(5000)}`;
    expectData(await send('post', small, { query: large, ...byHash(sha256(large)) }));
    expect(codeOf(await send('post', small, byHash(sha256(large))))).toBe('PERSISTED_QUERY_NOT_FOUND');
    const text = await (await fetch(`${small.url}/metrics`)).text();
    expect(Number(/^gateway_persisted_queries_cached_bytes (\d+)$/m.exec(text)?.[1])).toBeLessThanOrEqual(4096);
  });
});

describe('trusted documents off', () => {
  it('has no ids to resolve without a manifest: a documentId is not found (404)', async () => {
    const outcome = await send('post', gateways.off, { documentId: sha256(CATALOG) });
    expect([codeOf(outcome), outcome.status]).toEqual(['PERSISTED_QUERY_NOT_FOUND', 404]);
  });
});

describe.each(['allow', 'enforce'] as const)('trusted documents %s', (mode) => {
  const gateway = gateways[mode];

  it.each(EVERY_TRANSPORT)('run a listed operation by persistedQuery id, by documentId and by its exact text over %s', async (transport) => {
    expectData(await send(transport, gateway, byHash(sha256(CATALOG))));
    expectData(await send(transport, gateway, { documentId: sha256(CATALOG) }));
    expectData(await send(transport, gateway, { documentId: `sha256:${sha256(CATALOG)}` }));
    expectData(await send(transport, gateway, { query: CATALOG }));
    expectData(await send(transport, gateway, { query: TRENDS }), 'hashtagTrends');
  });

  it('run a listed operation by id over SSE by GET too', async () => {
    const response = await fetch(`${gateway.graphqlUrl}?documentId=${sha256(CATALOG)}`, { headers: { accept: 'text/event-stream', 'apollo-require-preflight': 'true', ...headers } });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/event: next\ndata: \{"data":\{"rewardCatalog":\[/);
  });

  it('answer an unknown documentId with PERSISTED_QUERY_NOT_FOUND before any upstream call', async () => {
    for (const transport of EVERY_TRANSPORT) {
      const outcome = await withoutUpstreamCalls(() => send(transport, gateway, { documentId: sha256('{ unknown }') }));
      expect([codeOf(outcome), outcome.status], transport).toEqual(['PERSISTED_QUERY_NOT_FOUND', refusalStatus(transport, 404)]);
    }
  });
});

describe('trusted documents allow', () => {
  it('run unlisted text, logged once per document (name and hash, never variables) and counted every time', async () => {
    const before = await metric(gateways.allow, 'gateway_trusted_documents_total', 'unlisted');
    for (const transport of EVERY_TRANSPORT) expectData(await send(transport, gateways.allow, { query: UNLISTED, variables: { secretish: 'variable-value-7c1e' } }));
    expect((await metric(gateways.allow, 'gateway_trusted_documents_total', 'unlisted')) - before).toBe(EVERY_TRANSPORT.length);
    const lines = () => capturedLogs.flatMap((text) => text.split('\n')).filter((line) => line.includes('operation not in the trusted documents') && line.includes(sha256(UNLISTED)));
    await expect.poll(() => lines().length).toBe(1);
    expect(JSON.parse(lines()[0]!)).toMatchObject({ operation: 'Unlisted', documentHash: sha256(UNLISTED) });
    // Neither the text nor a variable: the hash stands for the document.
    expect(lines()[0]).not.toContain('variable-value-7c1e');
    expect(lines()[0]).not.toContain('rewardCatalog');
  });
});

describe('trusted documents enforce', () => {
  it.each(EVERY_TRANSPORT)('refuse unlisted text over %s with PERSISTED_QUERY_NOT_IN_LIST, before any upstream call', async (transport) => {
    const outcome = await withoutUpstreamCalls(() => send(transport, gateways.enforce, { query: UNLISTED }));
    expect([codeOf(outcome), outcome.status]).toEqual(['PERSISTED_QUERY_NOT_IN_LIST', refusalStatus(transport, 403)]);
    // Not parsed: a text that is not even GraphQL gets the same answer.
    expect(codeOf(await send(transport, gateways.enforce, { query: '{ this is not graphql' }))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });

  it.each(EVERY_TRANSPORT)('never let automatic persisted queries register new text over %s', async (transport) => {
    const text = `query Smuggled { rewardCatalog { name rewards { name } } } # ${transport}`;
    const hash = sha256(text);
    expect(codeOf(await send(transport, gateways.enforce, byHash(hash)))).toBe('PERSISTED_QUERY_NOT_FOUND');
    const registration = await withoutUpstreamCalls(() => send(transport, gateways.enforce, { query: text, ...byHash(hash) }));
    expect([codeOf(registration), registration.status]).toEqual(['PERSISTED_QUERY_NOT_IN_LIST', refusalStatus(transport, 403)]);
    const after = await withoutUpstreamCalls(() => send(transport, gateways.enforce, byHash(hash)));
    expect([codeOf(after), after.status]).toEqual(['PERSISTED_QUERY_NOT_FOUND', NOT_FOUND_STATUS[transport]]);
  });

  it('counts what it refuses on /metrics', async () => {
    const before = await metric(gateways.enforce, 'gateway_trusted_documents_total', 'refused');
    await send('post', gateways.enforce, { query: UNLISTED });
    expect((await metric(gateways.enforce, 'gateway_trusted_documents_total', 'refused')) - before).toBe(1);
  });
});

describe('a bad manifest', () => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  /** Starts the gateway as an operator would, and returns how it ended. */
  const start = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = execFile(process.execPath, ['--import', 'tsx', 'gateway/main.ts'], { cwd: root, env: { PATH: process.env.PATH ?? '', GATEWAY_PORT: '0', LOG_LEVEL: 'warn', ...env }, timeout: 60_000 }, (_error, _stdout, stderr) =>
        done({ code: child.exitCode, stderr: String(stderr) }),
      );
    });

  it('stops the start with a message naming the setting', { timeout: 120_000 }, async () => {
    const wrongId = write('wrong-id.json', JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: sha256(TRENDS), name: 'Catalog', type: 'query', body: CATALOG }] }));
    const [badId, noManifest] = await Promise.all([start({ TRUSTED_DOCUMENTS_MANIFEST: wrongId }), start({ TRUSTED_DOCUMENTS: 'enforce' })]);
    for (const outcome of [badId, noManifest]) {
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toContain('Configuration error: ');
      expect(outcome.stderr).toContain('TRUSTED_DOCUMENTS_MANIFEST');
    }
    expect(badId.stderr).toContain('operations[0] (Catalog)');
  });
});
