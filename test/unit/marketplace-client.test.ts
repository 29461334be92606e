import { describe, expect, it } from 'vitest';
import { plpIdOf } from '../../subgraphs/marketplace/client.ts';
import { priceText } from '../../subgraphs/marketplace/resolvers/variations.ts';
import { createDownloadStore, gatewayOriginOf } from '../../subgraphs/kit/downloads.ts';

describe('marketplace quirks', () => {
  it('reads the new PLP id from the grouping message', () => {
    expect(plpIdOf({ message: 'Plp 7003 agrupada com sucesso.' })).toBe('7003');
    expect(plpIdOf({ message: 'PLP nº 42 agrupada com sucesso.' })).toBe('42');
    expect(plpIdOf({ plp_id: 9 })).toBe('9');
    expect(plpIdOf({ message: 'ok' })).toBeUndefined();
  });

  it('sends prices as decimal text with two places', () => {
    expect(priceText(49.9, 'price')).toBe('49.90');
    expect(priceText(0.1 + 0.2, 'price')).toBe('0.30');
    expect(() => priceText(1.999, 'price')).toThrow(/two decimal places/);
    expect(() => priceText(-1, 'price')).toThrow(/non-negative/);
  });
});

describe('download links', () => {
  it('expire on the store’s clock and are forgotten a lifetime later', async () => {
    let now = 0;
    const store = createDownloadStore<string>({ ttlMs: 1000, now: () => now });
    const { id, expiresAt } = await store.issue('plp-1');
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(expiresAt).toBe(1000);
    expect(await store.find(id)).toBe('plp-1');
    now = 1001;
    expect(await store.find(id)).toBe('expired');
    now = 2002;
    await store.issue('plp-2');
    expect(await store.find(id)).toBeUndefined();
  });

  it('accept only a bare http(s) origin from the gateway', () => {
    expect(gatewayOriginOf('https://graph.example.com')).toBe('https://graph.example.com');
    expect(gatewayOriginOf('https://graph.example.com/path')).toBeUndefined();
    expect(gatewayOriginOf('javascript:alert(1)')).toBeUndefined();
    expect(gatewayOriginOf(undefined)).toBeUndefined();
  });

  it('read each origin header for itself, a repeat and a change alike (the last value is remembered)', () => {
    const values = ['https://a.example.com', 'https://a.example.com', 'https://a.example.com/x', 'https://a.example.com/x', 'https://b.example.com:8443/', 'https://a.example.com', ['https://c.example.com', 'https://d.example.com']];
    expect(values.map((value) => gatewayOriginOf(value))).toEqual(['https://a.example.com', 'https://a.example.com', undefined, undefined, 'https://b.example.com:8443', 'https://a.example.com', 'https://c.example.com']);
  });
});
