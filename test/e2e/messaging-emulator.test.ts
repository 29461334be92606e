import http from 'node:http';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createMessagingEmulator } from '../../emulators/messaging/emulator.ts';
import { DEMO_ACCOUNT_ID, DEMO_STORE_ID, DEMO_TOKEN, OTHER_ACCOUNT_ID, OTHER_STORE_ID, SEEDED_NUMBERS } from '../../emulators/messaging/data.ts';
import { listen } from '../../lib/http.ts';
import { emulatorControl } from '../support/stack.ts';
import { waitUntil } from '../support/waitFor.ts';

/** The emulator is the upstream of every other messaging test: hold it to the spec directly. */
const started = await startEmulator(createMessagingEmulator({ deliveryRetryMs: 5, rateLimits: false }), 0);
afterAll(() => started.close());
const control = emulatorControl(started.url);

/** A callback receiver that fails the first `failures` posts, then records what it is sent. */
const received: { contentType: string; fields: Record<string, string> }[] = [];
let failures = 0;
const receiver = await listen(
  http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      if (failures > 0) {
        failures -= 1;
        res.writeHead(500).end();
        return;
      }
      const contentType = String(req.headers['content-type']);
      const raw = Buffer.concat(chunks);
      if (contentType.startsWith('application/json')) {
        received.push({ contentType, fields: JSON.parse(raw.toString()) as Record<string, string> });
      } else {
        const form = await new Request('http://local/', { method: 'POST', headers: { 'content-type': contentType }, body: raw }).formData();
        received.push({ contentType, fields: Object.fromEntries([...form].map(([name, value]) => [name, String(value)])) });
      }
      res.writeHead(200).end();
    });
  }),
  0,
);
afterAll(() => receiver.close());

beforeEach(async () => {
  await control.reset();
  received.length = 0;
  failures = 0;
  await control.control(`stores/${DEMO_STORE_ID}/callbacks`, { inboundCallbackURL: `${receiver.url}/inbound`, messageStatusURL: `${receiver.url}/status` });
});

const call = async (method: string, path: string, fields?: Record<string, string>, token: string | null = DEMO_TOKEN) => {
  const body = fields ? new FormData() : undefined;
  for (const [name, value] of Object.entries(fields ?? {})) body!.append(name, value);
  const response = await fetch(`${started.url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(body ? { body } : {}) });
  const text = await response.text();
  return { status: response.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
};

describe('messaging emulator', () => {
  it('refuses a missing or unknown bearer token with a fail body', async () => {
    for (const token of [null, 'not.a.jwt']) {
      expect(await call('GET', `/account/store/detail/${DEMO_STORE_ID}`, undefined, token)).toMatchObject({ status: 401, body: { status: 'fail', code: 401, results: [] } });
    }
  });

  it('answers the four documented failures with a 400 and an empty body', async () => {
    const cases = [
      await call('POST', '/account/store/keyword/delete', { storeId: DEMO_STORE_ID, keywordId: 'nope' }),
      await call('GET', `/subscriber/statusbystore/${DEMO_STORE_ID}/15559999999`),
      await call('POST', '/subscriber/sendoptin', { storeId: DEMO_STORE_ID, mobileId: 'abc', optInType: 'single' }),
      await call('GET', `/account/details/${OTHER_ACCOUNT_ID}`),
      await call('GET', '/subscriber/status/15559999999'),
    ];
    for (const refused of cases) expect([refused.status, refused.text]).toEqual([400, '']);
  });

  it('wraps every success in {status, code, message, results}, with Mongo-style ids and M/D/Y dates', async () => {
    const store = await call('GET', `/account/store/detail/${DEMO_STORE_ID}`);
    expect(store.body).toMatchObject({ status: 'pass', code: 200, message: expect.any(String), results: { _id: { $id: DEMO_STORE_ID }, mCreated: { sec: expect.any(Number), usec: expect.any(Number) } } });
    expect((store.body!.results as { created: string }).created).toMatch(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/);
    const page = await call('GET', `/subscriber/bystore/${DEMO_STORE_ID}/3`);
    expect(page.body!.results).toMatchObject({ count: 210, itemsPerPage: 100, currentPage: '3' });
    const [item] = (page.body!.results as { items: Record<string, unknown>[] }).items;
    expect(item).toMatchObject({ id: { $oid: expect.any(String) }, mCreate: { $date: { $numberLong: expect.stringMatching(/^\d+$/) } }, details: { optInAttempts: 1, subscriberStatus: 'Opted-In' } });
    const account = await call('GET', `/account/details/${DEMO_ACCOUNT_ID}`);
    expect(account.body!.results).toMatchObject({ apiKey: expect.any(String), salt: expect.any(String), store: [{ settings: { confirmation: 'enabled', already: 'enabled' } }, expect.anything()] });
  });

  it('posts callbacks as multipart form data, retried until the receiver takes them', async () => {
    failures = 2;
    const sent = await call('POST', '/subscriber/sendoptin', { storeId: DEMO_STORE_ID, mobileId: '+15556660100', optInType: 'double' });
    const messageId = (sent.body!.results as { messageId: string }).messageId;
    await waitUntil(() => received.length === 1, () => 'the status callback');
    expect(received[0]!.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(received[0]!.fields).toEqual({ status: 'pass', message: 'Double opt-in request sent', messageId, storeId: DEMO_STORE_ID, subscriberStatus: 'pending', Details: expect.any(String) });
    expect(JSON.parse(received[0]!.fields.Details!)).toMatchObject({ mobileId: '15556660100', optInAttempts: 1 });
    const [delivery] = (await (await fetch(`${started.url}/__emulator/deliveries`)).json()) as { attempts: number; state: string; target: string }[];
    expect(delivery).toMatchObject({ attempts: 3, state: 'delivered', target: `${receiver.url}/…` });
  });

  it('texts from a handset: an inbound callback with the sender, keyword and GMT date', async () => {
    await control.control('inbound', { from: '+1 555 777 0001', body: 'bread' });
    await waitUntil(() => received.length === 2, () => 'the status and inbound callbacks');
    const inbound = received.find((entry) => 'messageBody' in entry.fields)!;
    expect(inbound.fields).toMatchObject({ storeId: DEMO_STORE_ID, from: '+15557770001', messageBody: 'bread', keyword: 'BREAD', keywordType: 'opt-in', subscriberStatus: 'Opted-In' });
    expect(inbound.fields.received).toMatch(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/);
  });

  it('refuses a malformed inbound text or callback address on its control surface', async () => {
    expect((await fetch(`${started.url}/__emulator/inbound`, { method: 'POST', body: JSON.stringify({ from: 'me', body: '' }) })).status).toBe(400);
    expect((await fetch(`${started.url}/__emulator/stores/${DEMO_STORE_ID}/callbacks`, { method: 'POST', body: JSON.stringify({ inboundCallbackURL: 'ftp://x' }) })).status).toBe(400);
  });

  it('switches to the live service’s variants: callbacks urlencoded or JSON, fail bodies with HTTP 200; a reset restores multipart and 400', async () => {
    const variants = (body: unknown) => fetch(`${started.url}/__emulator/variants`, { method: 'POST', body: JSON.stringify(body) });
    const optIn = (storeId: string, mobileId: string) => call('POST', '/subscriber/sendoptin', { storeId, mobileId, optInType: 'double' });
    const answer = await variants({ callbacks: 'urlencoded', failureStatus: 200 });
    expect([answer.status, await answer.json()]).toEqual([200, { callbacks: 'urlencoded', failureStatus: 200 }]);

    expect(await optIn(OTHER_STORE_ID, '15556660100')).toMatchObject({ status: 200, body: { status: 'fail', code: 400, message: 'Invalid store id' } });
    await optIn(DEMO_STORE_ID, '15556660100');
    await waitUntil(() => received.length === 1, () => 'the urlencoded status callback');
    expect(received[0]).toMatchObject({ contentType: expect.stringMatching(/^application\/x-www-form-urlencoded/), fields: { storeId: DEMO_STORE_ID, subscriberStatus: 'pending' } });

    await variants({ callbacks: 'json' });
    await optIn(DEMO_STORE_ID, '15556660101');
    await waitUntil(() => received.length === 2, () => 'the JSON status callback');
    expect(received[1]).toMatchObject({ contentType: expect.stringMatching(/^application\/json/), fields: { storeId: DEMO_STORE_ID, subscriberStatus: 'pending' } });
    // One option leaves the other as it was.
    expect(await (await fetch(`${started.url}/__emulator/variants`)).json()).toEqual({ callbacks: 'json', failureStatus: 200 });

    await control.reset();
    expect(await (await fetch(`${started.url}/__emulator/variants`)).json()).toEqual({ callbacks: 'multipart', failureStatus: 400 });
    expect(await optIn(OTHER_STORE_ID, '15556660100')).toMatchObject({ status: 400, body: { status: 'fail' } });
  });

  it('refuses an unknown variant, field or body on its control surface, changing nothing', async () => {
    for (const body of [{ callbacks: 'xml' }, { failureStatus: 500 }, { failureStatus: '200' }, { real: true }, [], null]) {
      const answer = await fetch(`${started.url}/__emulator/variants`, { method: 'POST', body: JSON.stringify(body) });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(((await answer.json()) as { message: string }).message, JSON.stringify(body)).toMatch(/callbacks|failureStatus/);
    }
    expect(await (await fetch(`${started.url}/__emulator/variants`)).json()).toEqual({ callbacks: 'multipart', failureStatus: 400 });
  });

  it('keeps a subscriber pending while a double opt-in request is outstanding, and counts the attempts', async () => {
    await call('POST', '/subscriber/sendoptin', { storeId: DEMO_STORE_ID, mobileId: SEEDED_NUMBERS.pending, optInType: 'double' });
    const status = await call('GET', `/subscriber/statusbystore/${DEMO_STORE_ID}/${SEEDED_NUMBERS.pending}`);
    expect(status.body!.results).toMatchObject({ mobileId: SEEDED_NUMBERS.pending, details: { subscriberStatus: 'pending', optInAttempts: 2 } });
  });
});
