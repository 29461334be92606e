import { hash } from 'node:crypto';
import { createRequestRedis } from '../lib/requestRedis.ts';
import { createBoundedCache } from '../lib/boundedCache.ts';
import { addressBucket } from '../lib/addressBuckets.ts';
import { ALL_CREDENTIAL_HEADERS, SERVICE_ENTRY } from '../lib/services.ts';
import type { Headers } from './context.ts';
import type { Principal } from './auth/principal.ts';

/** A token bucket: `perSecond` tokens a second, up to `burst` saved; 0 per second turns it off. */
export interface BucketSettings {
  perSecond: number;
  burst: number;
}

export interface RateLimitSettings {
  /** Per caller: the principal, else each credential the request carries (by its hash), all of whose buckets must allow it. */
  caller: BucketSettings;
  /** Per client address. */
  address: BucketSettings;
  /** Shared buckets for every gateway replica. */
  redisUrl?: string | undefined;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; scope: 'caller' | 'address' };

/**
 * Refill every bucket and take one token from each, atomically, in Redis: KEYS the buckets; ARGV
 * rate, burst, now (ms). Answers 0 when taken, else the milliseconds until every bucket has a token;
 * a refusal takes and writes nothing, so requests refused never leave a bucket behind.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local tokens = {}
local wait = 0
for i, key in ipairs(KEYS) do
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local left = tonumber(state[1]) or burst
  local at = tonumber(state[2]) or now
  left = math.min(burst, left + (now - at) * rate / 1000)
  tokens[i] = left
  if left < 1 then wait = math.max(wait, math.ceil((1 - left) * 1000 / rate)) end
end
if wait > 0 then return wait end
local ttl = math.ceil(burst * 1000 / rate) + 1000
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, 'tokens', tokens[i] - 1, 'at', now)
  redis.call('PEXPIRE', key, ttl)
end
return 0
`;

/**
 * The headers each of which is a caller. An email names a seller, it proves nothing, and anyone
 * may know it: counted alone, strangers pairing it with made-up keys would spend the seller's
 * limit. The key sent beside it is counted instead.
 */
const CALLER_HEADERS = ALL_CREDENTIAL_HEADERS.filter((name) => name !== SERVICE_ENTRY.marketplace.credentialHeaders.email);

/**
 * What a connection remembers of its last caller. A keep-alive client sends the same credential with
 * every request, and hashing it again was 3% of the gateway's CPU at concurrency 32. What is
 * compared holds the credential, as the connection's own buffers do, and goes with the connection.
 */
interface Remembered {
  values: (string | string[] | undefined)[];
  /** Every credential header together, for the access log; `null` until asked for. */
  key: string | undefined | null;
  /** One per credential, for the rate limit; `undefined` until asked for. */
  keys: readonly string[] | undefined;
}
const lastCallerOf = new WeakMap<object, Remembered>();

/** Whether a request carries exactly the credential headers remembered, value for value. */
function sameCredentials(values: readonly (string | string[] | undefined)[], headers: Headers): boolean {
  for (let index = 0; index < ALL_CREDENTIAL_HEADERS.length; index += 1) {
    const value = headers[ALL_CREDENTIAL_HEADERS[index]!];
    const known = values[index];
    if (value !== known && (!Array.isArray(value) || !Array.isArray(known) || value.join('\u0000') !== known.join('\u0000'))) return false;
  }
  return true;
}

/** The connection's memory for these headers, renewed when they differ from its last request's. */
function rememberedFor(headers: Headers, connection: object | undefined): Remembered {
  const last = connection && lastCallerOf.get(connection);
  if (last && sameCredentials(last.values, headers)) return last;
  const fresh: Remembered = { values: ALL_CREDENTIAL_HEADERS.map((name) => headers[name]), key: null, keys: undefined };
  if (connection) lastCallerOf.set(connection, fresh);
  return fresh;
}

/**
 * Who the caller is, as one key (the access log's `caller`): never a credential itself, only the
 * hash of every credential header it sent. `connection` (the request's socket) remembers it: a
 * request with the same credentials gets the same key, compared header by header, without hashing
 * them again.
 */
export function callerKey(headers: Headers, principal: Principal | undefined, connection?: object): string | undefined {
  if (principal) return `p:${principal.id}`;
  const remembered = rememberedFor(headers, connection);
  if (remembered.key !== null) return remembered.key;
  let text = '';
  for (const name of ALL_CREDENTIAL_HEADERS) {
    const value = headers[name];
    if (value !== undefined) text += `${name}\u0000${String(value)}\u0000`;
  }
  // Hashed in one call (the same digest as hashing the parts in turn): a hash object and an update
  // per part cost three times as much.
  remembered.key = text ? `c:${hash('sha256', text, 'base64url')}` : undefined;
  return remembered.key;
}

/**
 * The rate limit's callers: the principal, else each credential the request carries, by the hash
 * of its header and the value its service is sent (the first of repeated values; a blank one is no
 * credential). Each is counted apart: a request cannot make itself a new caller by adding or
 * varying a header beside a credential it reuses, and carries at most one value per header, so a
 * request touches a bounded number of buckets. Remembered per connection as `callerKey` is.
 */
export function callerKeys(headers: Headers, principal: Principal | undefined, connection?: object): readonly string[] {
  if (principal) return [`p:${principal.id}`];
  const remembered = rememberedFor(headers, connection);
  if (remembered.keys) return remembered.keys;
  const keys: string[] = [];
  for (const name of CALLER_HEADERS) {
    const header = headers[name];
    const value = Array.isArray(header) ? header[0] : header;
    if (value) keys.push(`c:${hash('sha256', `${name}\u0000${value}`, 'base64url')}`);
  }
  remembered.keys = keys;
  return keys;
}

/** How long the limiter counts alone after its Redis failed to answer. */
const ALONE_MS = 5_000;

/**
 * Rate limits per caller and per client address, in memory (bounded) or in Redis so that every
 * gateway replica draws from the same buckets. A Redis that does not answer (refused, or silent
 * past its command timeout) is left alone for a few seconds, the process counting in its own
 * buckets meanwhile: the limit protects the graph, and an outage of its store should neither take
 * the graph down nor make every request wait out the timeout.
 */
export function createRateLimiter(settings: RateLimitSettings, now: () => number = Date.now) {
  const enabled = settings.caller.perSecond > 0 || settings.address.perSecond > 0;
  const redis = enabled && settings.redisUrl ? createRequestRedis(settings.redisUrl) : undefined;
  const local = createBoundedCache<{ tokens: number; at: number }>(100_000);

  let aloneUntil = -Infinity;

  /** Takes a token from every bucket, or from none: 0 when taken, else the milliseconds to wait. */
  async function take(keys: readonly string[], bucket: BucketSettings): Promise<number> {
    if (redis && now() >= aloneUntil) {
      try {
        return Number(await redis.eval(TAKE, keys.length, ...keys.map((key) => `graph:rate:${key}`), bucket.perSecond, bucket.burst, now()));
      } catch {
        aloneUntil = now() + ALONE_MS;
      }
    }
    const at = now();
    let wait = 0;
    const states: { tokens: number; at: number }[] = [];
    for (const key of keys) {
      // Refilled in place: a refusal leaves the bucket as it would be anyway, and keeps no new one.
      const state = local.get(key) ?? { tokens: bucket.burst, at };
      state.tokens = Math.min(bucket.burst, state.tokens + ((at - state.at) * bucket.perSecond) / 1000);
      state.at = at;
      if (state.tokens < 1) wait = Math.max(wait, Math.ceil(((1 - state.tokens) * 1000) / bucket.perSecond));
      states.push(state);
    }
    if (wait > 0) return wait;
    for (let index = 0; index < keys.length; index += 1) {
      states[index]!.tokens -= 1;
      local.set(keys[index]!, states[index]!);
    }
    return 0;
  }

  return {
    enabled,
    async check(headers: Headers, principal: Principal | undefined, address: string | undefined, connection?: object): Promise<RateDecision> {
      if (!enabled) return { allowed: true };
      const callers = settings.caller.perSecond > 0 ? callerKeys(headers, principal, connection) : undefined;
      if (callers?.length) {
        const wait = await take(callers, settings.caller);
        if (wait > 0) return { allowed: false, retryAfterSeconds: Math.ceil(wait / 1000), scope: 'caller' };
      }
      if (address && settings.address.perSecond > 0) {
        const wait = await take([`a:${addressBucket(address)}`], settings.address);
        if (wait > 0) return { allowed: false, retryAfterSeconds: Math.ceil(wait / 1000), scope: 'address' };
      }
      return { allowed: true };
    },
    close: async () => redis?.disconnect(),
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** The refusal as every transport sends it. */
export const rateLimitedError = (decision: Extract<RateDecision, { allowed: false }>) => ({
  message: `too many requests from this ${decision.scope}: try again in ${decision.retryAfterSeconds} s`,
  extensions: { code: 'RATE_LIMITED', retryAfterSeconds: decision.retryAfterSeconds },
});
