import { beforeEach, describe, expect, it } from 'vitest';
import { createClock } from '../../emulators/kit/emulator.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/** The clock the subgraph's download links expire by: moved by the test, never slept on. */
const clock = createClock();
const t = await startTestStack({ MARKETPLACE_DOWNLOAD_TTL_MS: '120000' }, { now: () => clock.now() });
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;

beforeEach(async () => {
  clock.reset();
  await emulator.reset();
});

async function pdfLink(id = '7001'): Promise<{ url: string; expiresAt: string }> {
  const result = await t.gql<{ labelGroup: { labelsPdf: { url: string; expiresAt: string } } }>(`{ labelGroup(id: "${id}") { labelsPdf { url expiresAt } } }`, { headers: seller });
  expect(result.errors).toBeUndefined();
  return result.data!.labelGroup.labelsPdf;
}

/** A PDF whose cross-reference table points at each object it lists. */
function expectValidPdf(bytes: Buffer): void {
  const text = bytes.toString('latin1');
  expect(text.startsWith('%PDF-1.4')).toBe(true);
  expect(text.trimEnd().endsWith('%%EOF')).toBe(true);
  const xrefAt = Number(/startxref\n(\d+)\n%%EOF/.exec(text)![1]);
  expect(text.slice(xrefAt, xrefAt + 4)).toBe('xref');
  const offsets = [...text.slice(xrefAt).matchAll(/^(\d{10}) 00000 n\r$/gm)].map((match) => Number(match[1]));
  expect(offsets.length).toBeGreaterThanOrEqual(5);
  offsets.forEach((offset, index) => expect(text.slice(offset, offset + 7)).toBe(`${index + 1} 0 obj`));
}

describe('label PDF download links', () => {
  it('are absolute on the gateway’s origin, carry no credential, and expire within minutes', async () => {
    const before = clock.now();
    const link = await pdfLink();
    const after = clock.now();
    expect(link.url).toMatch(new RegExp(`^${t.stack.gateway.url}/downloads/marketplace/[A-Za-z0-9_-]{32}$`));
    for (const secret of Object.values(DEMO_CREDENTIALS)) expect(link.url).not.toContain(secret);
    expect(Date.parse(link.expiresAt)).toBeGreaterThanOrEqual(before + 120_000);
    expect(Date.parse(link.expiresAt)).toBeLessThanOrEqual(after + 120_000);
  });

  it('download a valid PDF with a plain fetch and no headers, streamed from the upstream with the caller’s credential', async () => {
    const link = await pdfLink();
    await emulator.clearRequests();
    const response = await fetch(link.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="plp-7001.pdf"');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expectValidPdf(Buffer.from(await response.arrayBuffer()));

    const [call] = await emulator.requests();
    expect(call).toMatchObject({ method: 'GET', path: '/shipments/mkt/view', query: { plp_id: '7001' }, status: 200 });
    expect(call!.headers).toEqual(expect.arrayContaining(['x-api-key', 'x-user-email', 'x-accountmanager-key']));
    // A link works more than once while it lives (a browser may retry).
    expect((await fetch(link.url)).status).toBe(200);
  });

  it('stop working once expired, with a clear 410', async () => {
    const link = await pdfLink();
    clock.advance(110_000);
    expect((await fetch(link.url)).status).toBe(200);
    clock.advance(11_000);
    const expired = await fetch(link.url);
    expect(expired.status).toBe(410);
    expect(await expired.json()).toEqual({ message: 'This download link has expired. Ask the graph for a new one.' });
    await emulator.clearRequests();
    // A fresh link works again.
    expect((await fetch((await pdfLink()).url)).status).toBe(200);
  });

  it('answer 404 for an id never issued, a malformed one and an unknown subgraph, calling nothing upstream', async () => {
    const origin = t.stack.gateway.url;
    for (const path of [`/downloads/marketplace/${'A'.repeat(32)}`, '/downloads/marketplace/not.an.id', '/downloads/nosuch/abc', '/downloads/marketplace/']) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as { message: string }).message, path).toMatch(/does not exist/);
    }
    expect(await emulator.requests()).toEqual([]);
  });

  it('answer HEAD as GET without the file, and any other method 405 naming GET and HEAD', async () => {
    const link = await pdfLink();
    const got = await fetch(link.url);
    const file = Buffer.from(await got.arrayBuffer());
    const head = await fetch(link.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const name of ['content-type', 'content-disposition', 'cache-control', 'x-content-type-options', 'content-length']) {
      expect(head.headers.get(name), name).toBe(got.headers.get(name));
    }
    expect(Number(head.headers.get('content-length'))).toBe(file.length);
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const refused = await fetch(link.url, { method });
      expect(refused.status, method).toBe(405);
      expect(refused.headers.get('allow'), method).toBe('GET, HEAD');
    }
    const unknown = await fetch(`${t.stack.gateway.url}/downloads/marketplace/${'A'.repeat(32)}`, { method: 'HEAD' });
    expect(unknown.status).toBe(404);
    clock.advance(121_000);
    expect((await fetch(link.url, { method: 'HEAD' })).status).toBe(410);
    // Only the GET and the HEAD of the live link reached the upstream; the refused methods called nothing.
    expect((await emulator.requests()).filter((call) => call.path === '/shipments/mkt/view')).toHaveLength(2);
  });

  it('report a PLP ungrouped since the link was issued as 404', async () => {
    const link = await pdfLink('7002');
    await t.gql('mutation { ungroupLabelGroup(id: "7002") { id } }', { headers: seller });
    const response = await fetch(link.url);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: 'The file no longer exists upstream.' });
  });

  it('pass on no caller header to the subgraph: the link alone is the authority', async () => {
    const link = await pdfLink();
    await emulator.clearRequests();
    const response = await fetch(link.url, { headers: { cookie: 'session=abc', authorization: 'Bearer someone-else-1234567' } });
    expect(response.status).toBe(200);
    const [call] = await emulator.requests();
    expect(call!.headers).not.toContain('authorization');
    expect(call!.headers).not.toContain('cookie');
  });
});
