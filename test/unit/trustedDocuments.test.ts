import { createHash } from 'node:crypto';
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { ConfigError } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { createTrustedDocuments, MAX_MANIFEST_BYTES, parseManifest, readTrustedDocumentsSettings, type TrustedDocumentsSettings } from '../../gateway/trustedDocuments.ts';

const hash = (algorithm: 'sha256' | 'sha1', text: string) => createHash(algorithm).update(text).digest('hex');
const A = 'query A { a }';
const B = 'mutation B { b }';
const apollo = (operations: unknown[]) => JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations });

describe('the manifest parser', () => {
  it("reads Apollo's persisted query manifest, by id and by the body's SHA-256", () => {
    const manifest = parseManifest(apollo([{ id: hash('sha256', A), name: 'A', type: 'query', body: A }, { id: `sha256:${hash('sha256', B)}`, name: 'B', type: 'mutation', body: B }]));
    expect(manifest.size).toBe(2);
    expect(manifest.byId.get(hash('sha256', A))).toEqual({ body: A, name: 'A' });
    expect(manifest.byId.get(hash('sha256', B))?.body).toBe(B);
    expect(manifest.byId.get(`sha256:${hash('sha256', B)}`)?.body).toBe(B);
  });

  it("reads graphql-codegen's map of hash to body, SHA-1 (its default) or SHA-256", () => {
    const manifest = parseManifest(JSON.stringify({ [hash('sha1', A)]: A, [hash('sha256', B)]: B }));
    expect(manifest.size).toBe(2);
    expect(manifest.byId.get(hash('sha1', A))?.body).toBe(A);
    // Every operation can also be named by the SHA-256 of its text, as APQ and exact text look it up.
    expect(manifest.byId.get(hash('sha256', A))?.body).toBe(A);
  });

  it('refuses an id that is not the hash of its body, naming the setting and the operation', () => {
    expect(() => parseManifest(apollo([{ id: hash('sha256', B), name: 'A', type: 'query', body: A }]))).toThrow(
      new ConfigError('TRUSTED_DOCUMENTS_MANIFEST: operations[0] (A) has an id that is not the SHA-256 (nor the SHA-1) of its body, so it could name another text than its own: regenerate the manifest rather than edit it.'),
    );
    expect(() => parseManifest(JSON.stringify({ 'my-own-id': A }))).toThrow(/TRUSTED_DOCUMENTS_MANIFEST: "my-own-id" has an id that is not the SHA-256/);
  });

  it('refuses what is not JSON or not of either shape, naming the setting and the part', () => {
    expect(() => parseManifest('{"format": ')).toThrow(/^TRUSTED_DOCUMENTS_MANIFEST is not JSON/);
    expect(() => parseManifest(JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 2, operations: [] }))).toThrow(/TRUSTED_DOCUMENTS_MANIFEST is not a valid Apollo persisted query manifest: version/);
    expect(() => parseManifest(apollo([{ id: hash('sha256', A), name: 'A', type: 'fragment', body: A }]))).toThrow(/operations\.0\.type/);
    expect(() => parseManifest(JSON.stringify({ [hash('sha256', A)]: 42 }))).toThrow(/TRUSTED_DOCUMENTS_MANIFEST must be Apollo's persisted query manifest or graphql-codegen's/);
    expect(() => parseManifest('[]')).toThrow(ConfigError);
  });
});

describe('the settings', () => {
  const folder = mkdtempSync(join(tmpdir(), 'trusted-settings-'));
  const path = join(folder, 'manifest.json');
  writeFileSync(path, apollo([{ id: hash('sha256', A), name: 'A', type: 'query', body: A }]));

  it('are off without a manifest; with one, enforced in production and allowed elsewhere', () => {
    expect(readTrustedDocumentsSettings({})).toMatchObject({ mode: 'off', manifest: undefined, apq: { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024 } });
    expect(readTrustedDocumentsSettings({ NODE_ENV: 'production' }).mode).toBe('off');
    expect(readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: path }).mode).toBe('allow');
    expect(readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: path, NODE_ENV: 'production' }).mode).toBe('enforce');
    expect(readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: path, NODE_ENV: 'production', TRUSTED_DOCUMENTS: 'allow' }).mode).toBe('allow');
    expect(readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: path }).manifest?.size).toBe(1);
  });

  it('refuse a mode without a manifest, an unknown mode, and a file that is missing or too large', () => {
    expect(() => readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS: 'enforce' })).toThrow(new ConfigError('TRUSTED_DOCUMENTS=enforce needs TRUSTED_DOCUMENTS_MANIFEST, the path of the manifest of the operations clients may run.'));
    expect(() => readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS: 'strict' })).toThrow(/TRUSTED_DOCUMENTS must be off, allow or enforce; got "strict"/);
    expect(() => readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: join(folder, 'nope.json') })).toThrow(/TRUSTED_DOCUMENTS_MANIFEST \(.*nope\.json\) cannot be read: ENOENT/);
    expect(() => readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: folder })).toThrow(new ConfigError(`TRUSTED_DOCUMENTS_MANIFEST (${folder}) cannot be read: EISDIR.`));
    const large = join(folder, 'large.json');
    writeFileSync(large, '');
    // A sparse file: its size is read, never its bytes.
    truncateSync(large, MAX_MANIFEST_BYTES + 1);
    expect(() => readTrustedDocumentsSettings({ TRUSTED_DOCUMENTS_MANIFEST: large })).toThrow(/TRUSTED_DOCUMENTS_MANIFEST \(.*large\.json\) is 33554433 bytes, more than the 33554432/);
  });
});

describe('resolving an operation', () => {
  const manifest = parseManifest(apollo([{ id: hash('sha256', A), name: 'A', type: 'query', body: A }]));
  const logger = createLogger({ name: 'test', level: 'silent' });
  const settings = (mode: TrustedDocumentsSettings['mode']): TrustedDocumentsSettings => ({ mode, manifest, apq: { maxEntries: 10, maxBytes: 10_000 } });
  const byHash = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });

  it('keeps other extensions and drops the id once the text is found', () => {
    const trusted = createTrustedDocuments(settings('enforce'), { logger });
    expect(trusted.admitPayload({ query: '', extensions: { ...byHash(hash('sha256', A)), clientLibrary: { name: 'x' } }, variables: { v: 1 } })).toEqual({ admitted: { query: A, extensions: { clientLibrary: { name: 'x' } }, variables: { v: 1 } } });
    expect(trusted.admitPayload({ documentId: hash('sha256', A) })).toEqual({ admitted: { query: A } });
  });

  it('answers in enforce mode without hashing anything but the text, and never remembers it', () => {
    const trusted = createTrustedDocuments(settings('enforce'), { logger });
    const text = '{ b }';
    expect(trusted.resolve({ query: text, extensions: byHash(hash('sha256', text)) })).toMatchObject({ kind: 'refused', refusal: { status: 403, error: { extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } } } });
    expect(trusted.resolve({ extensions: byHash(hash('sha256', text)) })).toMatchObject({ kind: 'refused', refusal: { status: 200, error: { message: 'PersistedQueryNotFound' } } });
  });

  it('counts a remembered text in the bytes V8 holds for it: two a character once one is outside Latin-1', async () => {
    const registry = new Registry();
    const trusted = createTrustedDocuments(settings('off'), { logger, registry });
    // 3,000 characters, one of them '€': V8 keeps the whole text two bytes a character (6,000), its UTF-8 is 3,002.
    const texts = [0, 1, 2].map((index) => `query Wide${index} { b } # €${'x'.repeat(3000 - `query Wide${index} { b } # €`.length)}`);
    for (const text of texts) expect(trusted.resolve({ query: text, extensions: byHash(hash('sha256', text)) })).toMatchObject({ kind: 'resolved' });
    const gauge = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values[0]?.value;
    // 10,000 bytes hold one such text and its key, not three.
    expect([await gauge('gateway_persisted_queries_cached'), await gauge('gateway_persisted_queries_cached_bytes')]).toEqual([1, 64 + 2 * 3000]);
    expect(trusted.resolve({ extensions: byHash(hash('sha256', texts[0]!)) })).toMatchObject({ kind: 'refused', refusal: { error: { message: 'PersistedQueryNotFound' } } });
    expect(trusted.resolve({ extensions: byHash(hash('sha256', texts[2]!)) })).toMatchObject({ kind: 'resolved', query: texts[2] });
    // A Latin-1 text is one byte a character in V8, though its UTF-8 is more.
    const latin = `query Latin { b } # ${'é'.repeat(100)}`;
    trusted.resolve({ query: latin, extensions: byHash(hash('sha256', latin)) });
    expect(await gauge('gateway_persisted_queries_cached_bytes')).toBe(64 + 2 * 3000 + 64 + latin.length);
  });

  it('treats a null persistedQuery as none, as Apollo Server does', () => {
    expect(createTrustedDocuments(settings('off'), { logger }).resolve({ query: '{ b }', extensions: { persistedQuery: null } })).toEqual({ kind: 'as-is' });
  });
});

describe('a cache bounded in bytes', () => {
  it('forgets the oldest entries to stay within its bytes, and keeps nothing larger than all of them', () => {
    const cache = createBoundedCache<string>(100, { maxBytes: 10, sizeOf: (_key, value) => value.length });
    cache.set('a', '1234');
    cache.set('b', '1234');
    cache.set('c', '1234');
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.bytes]).toEqual([undefined, '1234', '1234', 8]);
    cache.set('b', '12');
    expect(cache.bytes).toBe(6);
    cache.set('huge', '12345678901');
    expect([cache.get('huge'), cache.size, cache.bytes]).toEqual([undefined, 2, 6]);
  });
});
