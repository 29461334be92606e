import { hash } from 'node:crypto';
import { createRequestRedis } from '../lib/requestRedis.ts';
import { createBoundedCache } from '../lib/boundedCache.ts';
import { addressBucket } from '../lib/addressBuckets.ts';
import { ALL_CREDENTIAL_HEADERS } from '../lib/services.ts';
import type { Headers } from './context.ts';
import type { Principal } from './auth/principal.ts';

/** A token bucket: `perSecond` tokens a second, up to `burst` saved; 0 per second turns it off. */
export interface BucketSettings {
  perSecond: number;
  burst: number;
}

export interface RateLimitSettings {
  /** Per caller: the principal, else a hash of the credential headers it sent. */
  caller: BucketSettings;
  /** Per client address. */
  address: BucketSettings;
  /** Shared buckets for every gateway replica. */
  redisUrl?: string | undefined;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; scope: 'caller' | 'address' };

/**
 * Refill and take one token atomically, in Redis: KEYS[1] the bucket; ARGV rate, burst, now (ms).
 * Answers 0 when taken, else the milliseconds until a token is there.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + (now - at) * rate / 1000)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
`;

/**
 * The key of each connection's last caller. A keep-alive client sends the same credential with
 * every request, and hashing it again was 3% of the gateway's CPU at concurrency 32. What is
 * compared holds the credential, as the connection's own buffers do, and goes with the connection.
 */
const lastCallerOf = new WeakMap<object, { values: (string | string[] | undefined)[]; key: string }>();

/** Whether a request carries exactly the credential headers remembered, value for value. */
function sameCredentials(values: readonly (string | string[] | undefined)[], headers: Headers): boolean {
  for (let index = 0; index < ALL_CREDENTIAL_HEADERS.length; index += 1) {
    const value = headers[ALL_CREDENTIAL_HEADERS[index]!];
    const known = values[index];
    if (value !== known && (!Array.isArray(value) || !Array.isArray(known) || value.join('\u0000') !== known.join('\u0000'))) return false;
  }
  return true;
}

/**
 * Who the caller is, for its bucket: never a credential itself, only its hash. `connection` (the
 * request's socket) remembers the last one: a request with the same credentials gets the same key,
 * compared header by header, without hashing them again.
 */
export function callerKey(headers: Headers, principal: Principal | undefined, connection?: object): string | undefined {
  if (principal) return `p:${principal.id}`;
  const last = connection && lastCallerOf.get(connection);
  if (last && sameCredentials(last.values, headers)) return last.key;
  let text = '';
  for (const name of ALL_CREDENTIAL_HEADERS) {
    const value = headers[name];
    if (value !== undefined) text += `${name}\u0000${String(value)}\u0000`;
  }
  if (!text) return undefined;
  // Hashed in one call (the same digest as hashing the parts in turn): a hash object and an update
  // per part cost three times as much.
  const key = `c:${hash('sha256', text, 'base64url')}`;
  if (connection) lastCallerOf.set(connection, { values: ALL_CREDENTIAL_HEADERS.map((name) => headers[name]), key });
  return key;
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

  async function take(key: string, bucket: BucketSettings): Promise<number> {
    if (redis && now() >= aloneUntil) {
      try {
        return Number(await redis.eval(TAKE, 1, `graph:rate:${key}`, bucket.perSecond, bucket.burst, now()));
      } catch {
        aloneUntil = now() + ALONE_MS;
      }
    }
    const at = now();
    const state = local.get(key) ?? { tokens: bucket.burst, at };
    state.tokens = Math.min(bucket.burst, state.tokens + ((at - state.at) * bucket.perSecond) / 1000);
    state.at = at;
    let wait = 0;
    if (state.tokens >= 1) state.tokens -= 1;
    else wait = Math.ceil(((1 - state.tokens) * 1000) / bucket.perSecond);
    local.set(key, state);
    return wait;
  }

  return {
    enabled,
    async check(headers: Headers, principal: Principal | undefined, address: string | undefined, connection?: object): Promise<RateDecision> {
      if (!enabled) return { allowed: true };
      const caller = settings.caller.perSecond > 0 ? callerKey(headers, principal, connection) : undefined;
      if (caller) {
        const wait = await take(caller, settings.caller);
        if (wait > 0) return { allowed: false, retryAfterSeconds: Math.ceil(wait / 1000), scope: 'caller' };
      }
      if (address && settings.address.perSecond > 0) {
        const wait = await take(`a:${addressBucket(address)}`, settings.address);
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
