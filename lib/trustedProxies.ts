import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { ConfigError, type Env } from './config.ts';

/**
 * The proxies whose `X-Forwarded-*` headers are believed: any other peer could write them itself
 * (`Host: evil.example` plus `X-Forwarded-Proto: https`) and so choose the links it is handed.
 */
export interface TrustedProxies {
  /** Whether a peer address (as `socket.remoteAddress` gives it) is one of the configured proxies. */
  trusts(address: string | undefined): boolean;
  /** No proxy configured: forwarded headers are never believed. */
  readonly none: boolean;
}

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Parses a list of IP addresses and CIDR ranges (`10.0.0.0/8, ::1, 192.168.1.7`, separated by commas or spaces). */
export function makeTrustedProxies(entries: readonly string[], name = 'TRUSTED_PROXIES'): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefixText, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = prefixText === undefined ? undefined : Number(prefixText);
    const maxPrefix = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || (prefix !== undefined && (!/^\d{1,3}$/.test(prefixText!) || prefix > maxPrefix))) {
      throw new ConfigError(`${name} must be a comma-separated list of IP addresses or CIDR ranges such as 10.0.0.0/8,::1; got "${entry}".`);
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return {
    none: entries.length === 0,
    trusts(raw) {
      if (!raw || entries.length === 0) return false;
      const address = IPV4_MAPPED.exec(raw)?.[1] ?? raw;
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}

export function readTrustedProxies(env: Env, name = 'TRUSTED_PROXIES'): TrustedProxies {
  const raw = env[name] ?? '';
  return makeTrustedProxies(
    raw
      .split(/[\s,]+/)
      .filter(Boolean),
    name,
  );
}

/** A forwarded header's first value (the client's side of the first proxy), when a trusted proxy sent it. */
export function forwardedHeader(req: IncomingMessage, proxies: TrustedProxies, name: string): string | undefined {
  if (!proxies.trusts(req.socket.remoteAddress)) return undefined;
  const raw = req.headers[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.split(',')[0]?.trim();
  return value || undefined;
}

/**
 * The client's address, for limits per address: the peer's, unless the peer is a trusted proxy;
 * then the nearest address in `X-Forwarded-For` that is not one, read from the right, since each
 * proxy appends the address it was reached from and whatever a client wrote sits on the left.
 * Behind a load balancer every peer is the balancer: without this, its clients share one bucket.
 */
export function clientAddress(req: IncomingMessage, proxies: TrustedProxies): string | undefined {
  let address = req.socket.remoteAddress;
  if (proxies.none || !proxies.trusts(address)) return address;
  const raw = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',');
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    const hop = hops[index]!.trim();
    // A hop no proxy could have written: the last address believed stands.
    if (!isIP(hop)) break;
    address = hop;
    if (!proxies.trusts(hop)) break;
  }
  return address;
}
