import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { createBoundedCache } from './boundedCache.ts';

/** Parsing an IPv6 address costs some 5 µs: each client's bucket is remembered, within bounds. */
const ipv6Buckets = createBoundedCache<string>(10_000);

/**
 * The bucket of a client address for limits per address: an IPv4 address alone (written as IPv4
 * when it came mapped into IPv6), an IPv6 address by its /64, the smallest network a host is
 * given: one host holds a whole /64 and could otherwise take a fresh bucket per request.
 */
export function addressBucket(address: string): string {
  // The common case, on every rate-limited request: no parsing.
  if (isIPv4(address)) return address;
  let bucket = ipv6Buckets.get(address);
  if (bucket === undefined) ipv6Buckets.set(address, (bucket = parseBucket(address)));
  return bucket;
}

function parseBucket(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const prefix = new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toString()}/64`;
}
