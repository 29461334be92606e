import { describe, expect, it } from 'vitest';
import { serviceDateToIso } from '../../subgraphs/messaging/dates.ts';
import { keyword, mobileNumber, responderContent } from '../../subgraphs/messaging/validate.ts';
import { decodeDeliveryBody } from '../../subgraphs/kit/events/deliveryBodies.ts';
import { parseInboundCallback, parseStatusCallback } from '../../subgraphs/messaging/events.ts';

describe('the service dates', () => {
  it('reads month/day/year hour:minute:second as GMT', () => {
    expect(serviceDateToIso('11/22/2026 18:04:05')).toBe('2026-11-22T18:04:05.000Z');
    expect(serviceDateToIso('1/2/2026 3:04:05')).toBe('2026-01-02T03:04:05.000Z');
  });

  it('reads a day that does not exist, or another format, as null', () => {
    for (const text of ['02/30/2026 00:00:00', '2026-11-22T18:04:05Z', '13/01/2026 00:00:00', '11/22/2026 24:00:00', '']) expect(serviceDateToIso(text)).toBeNull();
  });
});

describe("the service's input rules", () => {
  it('sends mobile numbers as digits only', () => {
    expect(mobileNumber('+1 555 000 0001', 'mobileId')).toBe('15550000001');
    expect(() => mobileNumber('+1-555-000-0001', 'mobileId')).toThrow(/digits/);
  });

  it('takes keywords of 2 to 30 letters, digits and spaces', () => {
    expect(keyword(' cloud wire ', 'keyword')).toBe('cloud wire');
    expect(keyword('x'.repeat(30), 'keyword')).toHaveLength(30);
    for (const bad of ['x', 'x'.repeat(31), 'sale!']) expect(() => keyword(bad, 'keyword')).toThrow();
  });

  it('needs responder content or a media URL', () => {
    expect(responderContent({ mediaUrl: 'http://x.example/a.gif' })).toEqual({ mediaUrl: 'http://x.example/a.gif' });
    expect(() => responderContent({ content: '  ', mediaUrl: '' })).toThrow(/content, a media URL, or both/);
  });
});

describe('callback bodies', () => {
  it('decodes multipart, urlencoded and JSON alike', async () => {
    const form = new FormData();
    form.append('storeId', 's1');
    form.append('from', '+15550000001');
    const encoded = new Response(form);
    const multipart = await decodeDeliveryBody(Buffer.from(await encoded.arrayBuffer()), encoded.headers.get('content-type')!);
    const urlencoded = await decodeDeliveryBody(Buffer.from('storeId=s1&from=%2B15550000001'), 'application/x-www-form-urlencoded');
    const json = await decodeDeliveryBody(Buffer.from('{"storeId":"s1","from":"+15550000001"}'), 'application/json');
    for (const body of [multipart, urlencoded, json]) expect(body).toEqual({ storeId: 's1', from: '+15550000001' });
  });

  it('bounds the number of fields', async () => {
    const many = Array.from({ length: 101 }, (_, index) => `f${index}=1`).join('&');
    await expect(decodeDeliveryBody(Buffer.from(many), 'application/x-www-form-urlencoded')).rejects.toMatchObject({ status: 400 });
  });

  it('reads field names in any case and dedupes by the service message id', () => {
    const inbound = parseInboundCallback({ StoreId: 's1', From: '+1 555 000 0001', MessageBody: 'hi', MessageId: 'm1' });
    expect(inbound).toMatchObject({ dedupeKey: 'message.inbound:m1', payload: { storeId: 's1', from: '15550000001', body: 'hi' } });
    const status = parseStatusCallback({ status: 'FAIL', storeId: 's1', messageId: 'm2', Details: '{"mobileId":"15550000001","reason":"locked"}' });
    expect(status).toMatchObject({ dedupeKey: 'message.status:m2:fail:', payload: { succeeded: false, mobileId: '15550000001', reason: 'locked' } });
  });
});
