import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createMarketplaceEmulator, LOGIN_PROMPT, NEXT_URL_LIFETIME_MS } from '../../emulators/marketplace/emulator.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { emulatorControl } from '../support/stack.ts';

/** The emulator is the upstream of every other test: hold it to the spec directly (its rate limits: test/e2e/upstream-pacing.test.ts). */
const started = await startEmulator(createMarketplaceEmulator({ marketplace: 'acme', rateLimits: false }), 0);
afterAll(() => started.close());
const control = emulatorControl(started.url);
const auth = {
  'x-user-email': DEMO_CREDENTIALS.email,
  'x-api-key': DEMO_CREDENTIALS.apiKey,
  'x-accountmanager-key': DEMO_CREDENTIALS.accountKey,
  accept: 'application/json',
};

beforeEach(() => control.reset());

const call = (path: string, init: RequestInit = {}) => fetch(`${started.url}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('marketplace emulator', () => {
  it('answers a failed credential with the documented 401 {error} login prompt', async () => {
    for (const headers of [{ accept: 'application/json' }, { ...auth, 'x-api-key': 'nope' }, { ...auth, 'x-user-token': 'nope' }]) {
      const response = await fetch(`${started.url}/questions?platform=ALPHA`, { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: LOGIN_PROMPT });
    }
  });

  it('applies the Authentication table: e-mail optional on freights, account key optional on delivery and absent on stock', async () => {
    const { 'x-user-email': _email, ...noEmail } = auth;
    expect((await fetch(`${started.url}/freights`, { headers: noEmail })).status).toBe(200);
    expect((await fetch(`${started.url}/status_types`, { headers: noEmail })).status).toBe(401);
    const { 'x-accountmanager-key': _account, ...noAccount } = auth;
    expect((await fetch(`${started.url}/fulfillment/acme/stock`, { headers: noAccount })).status).toBe(200);
    expect((await fetch(`${started.url}/status_types`, { headers: noAccount })).status).toBe(401);
    const delivery = await fetch(`${started.url}/fulfillment/acme/delivery`, { ...json({ recipient_document: '12345678000190', invoice: { payload: '<nfe/>' } }), headers: { ...noAccount, 'content-type': 'application/json' } });
    expect(delivery.status).toBe(204);
    const token = { 'x-user-token': DEMO_CREDENTIALS.userToken, 'x-accountmanager-key': DEMO_CREDENTIALS.accountKey, accept: 'application/json' };
    expect((await fetch(`${started.url}/status_types`, { headers: token })).status).toBe(200);
  });

  it('serves questions with the documented errors: 400 {errors}, 404 {errors}, 204 empty', async () => {
    const missing = await call('/questions');
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ errors: ['platform is required'] });
    expect((await call('/questions?platform=ALPHA,BETA')).status).toBe(400);
    const page = (await (await call('/questions?platform=ALPHA&status=UNANSWERED')).json()) as { questions: { id: string; answered: boolean }[]; cursor: string };
    expect(page.questions).toHaveLength(20);
    expect(page.questions.every((question) => question.id.startsWith('ALPHA-') && question.answered === false)).toBe(true);
    // With a cursor the filters are ignored: it carries the first query's.
    const next = (await (await call(`/questions?platform=BETA&status=ANSWERED&cursor=${page.cursor}`)).json()) as { questions: { id: string; answered: boolean }[]; cursor: string | null };
    expect(next.questions.every((question) => question.id.startsWith('ALPHA-') && question.answered === false)).toBe(true);
    expect(next.cursor).toBeNull();

    const unknown = await call('/questions/ALPHA-1');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ errors: ['Question not found'] });
    const deleted = await call('/questions/ALPHA-100037', { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
  });

  it('answers a question from a multipart form', async () => {
    const form = new FormData();
    form.append('answer', 'Yes.');
    const response = await call('/questions/ALPHA-100037/answer', { method: 'POST', body: form });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 'ALPHA-100037', answered: true, answer: { message: 'Yes.' } });
  });

  it('groups with the real service’s message, under the configured marketplace name only', async () => {
    const grouped = await call('/shipments/acme/', json({ order_remote_codes: ['ORD-2010'] }));
    expect(grouped.status).toBe(200);
    expect(await grouped.json()).toEqual({ message: 'Plp 7003 agrupada com sucesso.' });
    const other = await call('/shipments/mkt/');
    expect(other.status).toBe(404);
    expect((await control.requests()).at(-1)).toMatchObject({ path: '/shipments/mkt/', unmatched: true });
  });

  it('views labels as JSON or as a real PDF, by Accept', async () => {
    const data = await call('/shipments/acme/view?plp_id=7001');
    expect(((await data.json()) as { plp: { labels: unknown[] } }).plp.labels).toHaveLength(3);
    const pdf = await call('/shipments/acme/view?plp_id=7001', { headers: { accept: 'application/pdf' } });
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = Buffer.from(await pdf.arrayBuffer()).toString('latin1');
    expect(text).toMatch(/^%PDF-1\.4\n[\s\S]*xref\n0 6\n[\s\S]*%%EOF\n$/);
    expect((await call('/shipments/acme/view?plp_id=7001', { headers: { accept: 'text/html' } })).status).toBe(406);
    expect((await call('/shipments/acme/view?plp_id=9')).status).toBe(404);
  });

  it('hands out a next URL that expires 10 minutes ahead on its clock', async () => {
    const first = (await (await call('/products')).json()) as { products: unknown[]; total: number; next: string };
    expect(first.products).toHaveLength(10);
    expect(first.total).toBe(30);
    const next = new URL(first.next);
    expect(next.origin).toBe(started.url);
    const expires = Number(next.searchParams.get('expires'));
    const now = Date.parse(((await control.control('clock', { advanceMs: 0 })) as { now: string }).now);
    expect(expires - now).toBeGreaterThan(NEXT_URL_LIFETIME_MS - 5_000);
    expect(expires - now).toBeLessThanOrEqual(NEXT_URL_LIFETIME_MS);
    expect((await call(`${next.pathname}${next.search}`)).status).toBe(200);
    await control.control('clock', { advanceMs: NEXT_URL_LIFETIME_MS + 1 });
    const expired = await call(`${next.pathname}${next.search}`);
    expect(expired.status).toBe(410);
    expect(await expired.json()).toEqual({ errors: ['This page link has expired: request the first page again'] });
  });

  it('refuses a SKU over 25 characters, a connected variation’s deletion and a price that is not text', async () => {
    const long = await call('/products', json({ product: { sku: 'X'.repeat(26), name: 'x' } }));
    expect(long.status).toBe(422);
    expect((await call('/variations/SKU-0001-BLA', { method: 'DELETE' })).status).toBe(409);
    expect((await call('/variations/SKU-0003-BLA', { method: 'DELETE' })).status).toBe(204);
    const price = await call('/variations/SKU-0001-BLA', { ...json({ variation: { specifications: [{ key: 'price', value: 49.9 }] } }), method: 'PUT' });
    expect(price.status).toBe(422);
  });

  it('caps stock per_page at 100 and sends quantities as text', async () => {
    expect((await call('/fulfillment/acme/stock?per_page=101')).status).toBe(422);
    const stock = (await (await call('/fulfillment/acme/stock?per_page=100')).json()) as { stock: { stock: unknown; reserved_stock: unknown }[] };
    expect(stock.stock).toHaveLength(60);
    expect(typeof stock.stock[0]!.stock).toBe('string');
    expect((await call('/fulfillment/acme/delivery/nfe?cd_vat_number=12345678000190')).status).toBe(422);
  });

  it('logs header names only and masks credentials; unknown routes fail loudly', async () => {
    await call('/status_types');
    await call('/nothing-here');
    const log = await control.requests();
    expect(log[0]).toMatchObject({ method: 'GET', path: '/status_types', status: 200 });
    expect(log[0]!.headers).toContain('x-api-key');
    expect(log[1]).toMatchObject({ path: '/nothing-here', status: 404, unmatched: true });
    const text = JSON.stringify(log);
    for (const secret of Object.values(DEMO_CREDENTIALS)) expect(text).not.toContain(secret);
  });
});
