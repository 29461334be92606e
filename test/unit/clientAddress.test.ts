import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, makeTrustedProxies } from '../../lib/trustedProxies.ts';
import { addressBucket } from '../../lib/addressBuckets.ts';

const request = (peer: string, forwardedFor?: string | string[]) => ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('the client address behind trusted proxies', () => {
  const proxies = makeTrustedProxies(['10.0.0.0/8', '::1']);

  it('is the peer when no proxy is trusted, or the peer is not one, whatever it forwards', () => {
    expect(clientAddress(request('10.0.0.5', '203.0.113.1'), makeTrustedProxies([]))).toBe('10.0.0.5');
    expect(clientAddress(request('198.51.100.9', '203.0.113.1'), proxies)).toBe('198.51.100.9');
  });

  it('is the nearest forwarded address that is not a trusted proxy, read from the right', () => {
    expect(clientAddress(request('10.0.0.5', '203.0.113.1'), proxies)).toBe('203.0.113.1');
    expect(clientAddress(request('10.0.0.5', '198.51.100.7, 203.0.113.1, 10.1.2.3'), proxies)).toBe('203.0.113.1');
    // Several headers are one list, in order.
    expect(clientAddress(request('::ffff:10.0.0.5', ['198.51.100.7', '203.0.113.1, 10.1.2.3']), proxies)).toBe('203.0.113.1');
    expect(clientAddress(request('::1', ' 2001:db8::7 '), proxies)).toBe('2001:db8::7');
  });

  it('finds the client in a header as long as Node lets through (16 KiB), whatever a client wrote to the left', () => {
    const written = Array.from({ length: 1200 }, (_, index) => `198.51.${index >> 8}.${index & 255}`).join(', ');
    expect(written.length).toBeGreaterThan(15 * 1024);
    expect(clientAddress(request('10.0.0.5', `${written}, 203.0.113.9, 10.1.2.3`), proxies)).toBe('203.0.113.9');
  });

  it('stops at a hop no proxy could have written, and falls back to the peer without the header', () => {
    expect(clientAddress(request('10.0.0.5', 'not-an-address, 10.1.2.3'), proxies)).toBe('10.1.2.3');
    expect(clientAddress(request('10.0.0.5', '203.0.113.1:4711'), proxies)).toBe('10.0.0.5');
    expect(clientAddress(request('10.0.0.5'), proxies)).toBe('10.0.0.5');
    expect(clientAddress(request('10.0.0.5', ''), proxies)).toBe('10.0.0.5');
    // Only proxies of ours in the list: the farthest of them is the client.
    expect(clientAddress(request('10.0.0.5', '10.9.9.9, 10.1.2.3'), proxies)).toBe('10.9.9.9');
  });
});

describe('the bucket of an address', () => {
  it('is an IPv4 address itself, an IPv4-mapped one as IPv4, and an IPv6 one its /64', () => {
    expect(addressBucket('203.0.113.1')).toBe('203.0.113.1');
    expect(addressBucket('::ffff:203.0.113.1')).toBe('203.0.113.1');
    expect(addressBucket('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8:1:2::1')).toBe(addressBucket('2001:0DB8:0001:0002:ffff::'));
    expect(addressBucket('2001:db8:1:3::1')).not.toBe(addressBucket('2001:db8:1:2::1'));
    expect(addressBucket('not an address')).toBe('not an address');
  });
});
