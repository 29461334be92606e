import ipaddr from 'ipaddr.js';

/**
 * The bucket of a client address for limits per address: an IPv4 address alone (written as IPv4
 * when it came mapped into IPv6), an IPv6 address by its /64, the smallest network a host is
 * given: one host holds a whole /64 and could otherwise take a fresh bucket per request.
 */
export function addressBucket(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const prefix = new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toString()}/64`;
}
