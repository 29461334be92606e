import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRequestRedis } from '../../lib/requestRedis.ts';
import { ErrorCode } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { canonical, DOWNLOAD_ID, downloadBounds, newDownloadId, type DownloadBounds, type DownloadStore } from './downloads.ts';
import { graphError } from './errors.ts';

export interface RedisDownloadStoreOptions<T> extends DownloadBounds<T> {
  url: string;
  /** Prefix of every key, so several graphs can share one Redis; the bounds hold per prefix. */
  prefix: string;
  /** How long a link works; Redis keeps the entry one more lifetime, to answer `expired`. */
  ttlMs: number;
  /** Reads a stored value back, or undefined when it is not what this version stores. */
  read(value: unknown): T | undefined;
  /** The service named in errors. */
  service: string;
  /** Largest value (its JSON) a link may stand for: a bigger one is refused, never stored. @default 16384 */
  maxValueBytes?: number;
  /** @default Date.now */
  now?: () => number;
  /** How long one Redis command may take before the link fails instead of hanging. @default 2000 */
  commandTimeoutMs?: number;
  logger?: Logger;
}

const derive = (text: string, purpose: string) => Buffer.from(hkdfSync('sha256', text, '', `graph download link ${purpose}`, 32));
const digest = (text: string, purpose: string) => derive(text, purpose).toString('base64url');

/** Length of every digest in a key or member (32 bytes in base64url), so that Lua can cut them apart. */
const DIGEST = 43;
/** Longest pointer from a value to its link Redis may hand back: a link digest, an expiry and a sealed `{i, e}`. */
const MAX_POINTER = DIGEST + 256;
/** Links given up at most in one issue, per reason: a store whose bounds were lowered converges over several. */
const MAX_STEPS = 64;

/**
 * Issues a link atomically, with the in-memory store's rules (`createDownloadStore`). Keys under
 * `base` (`<prefix>:download:`): `<link>` the sealed value; `owner:<owner>` a sorted set of the
 * owner's links (`<link><value><expiresAt>`, in the order issued); `all` every link
 * (`<owner><link><value><expiresAt>`, in the order issued, which with one lifetime for all is the
 * order they expire in); `owners` owners by how many links they hold; `seq` the order; and
 * `value:<value>` the value's newest link (`<link><expiresAt>|<sealed id>`). A pointer expires a
 * lifetime after its link was made, the others two lifetimes after the last link they count, as
 * the links do.
 *
 * KEYS all, owners, owner:<owner>, value:<value>, <link>, seq.
 * ARGV at, half a lifetime, two lifetimes (ms), maxEntries, maxEntriesPerOwner, owner, link,
 * value, sealed value, sealed id, expiresAt, base, forgotten before (at - lifetime), 1 to make a
 * fresh link whatever the value's pointer says, one lifetime.
 * Answers {1, sealed id} for the value's live link with half its life ahead, else stores and answers {0}.
 */
const ISSUE = `
local at = tonumber(ARGV[1])
local D = ${DIGEST}
local base = ARGV[12]
if ARGV[14] ~= '1' then
  local held = redis.call('GET', KEYS[4])
  local bar = held and #held <= ${MAX_POINTER} and string.find(held, '|', D + 1, true)
  if bar then
    local e = string.sub(held, D + 1, bar - 1)
    local expiresAt = tonumber(e)
    -- Not one nearly dead, nor one issued after at (the clock went back): it would outlive its promise.
    if expiresAt and at < expiresAt - tonumber(ARGV[2]) and at >= expiresAt - tonumber(ARGV[15])
      and redis.call('ZSCORE', KEYS[3], string.sub(held, 1, D) .. ARGV[8] .. e) then
      return {1, string.sub(held, bar + 1)}
    end
  end
end

-- rest is <link><value><expiresAt>.
local function drop(owner, rest)
  local link = string.sub(rest, 1, D)
  redis.call('DEL', base .. link)
  local links = base .. 'owner:' .. owner
  redis.call('ZREM', links, rest)
  local left = redis.call('ZCARD', links)
  if left > 0 then redis.call('ZADD', KEYS[2], left, owner) else redis.call('ZREM', KEYS[2], owner) end
  local pointer = base .. 'value:' .. string.sub(rest, D + 1, 2 * D)
  local points = redis.call('GET', pointer)
  if points and string.sub(points, 1, D) == link then redis.call('DEL', pointer) end
  return redis.call('ZREM', KEYS[1], owner .. rest)
end
local function dropListed(member) return drop(string.sub(member, 1, D), string.sub(member, D + 1)) end
local function expiryOf(member) return tonumber(string.sub(member, 3 * D + 1)) or 0 end

-- An expired link answers expired for one more lifetime, then is forgotten.
for _ = 1, ${MAX_STEPS} do
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not first or expiryOf(first) >= tonumber(ARGV[13]) then break end
  dropListed(first)
end

local steps = 0
while redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) and steps < ${MAX_STEPS} do
  drop(ARGV[6], redis.call('ZRANGE', KEYS[3], 0, 0)[1])
  steps = steps + 1
end

-- Full: a dead link goes first, else the oldest of the owner holding the most, which is the
-- caller's own when it holds as many as anyone.
steps = 0
while redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) and steps < ${MAX_STEPS} do
  steps = steps + 1
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  local victim
  if at > expiryOf(first) then
    victim = first
  else
    local holder = ARGV[6]
    local top = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    if top[1] and tonumber(top[2]) > redis.call('ZCARD', KEYS[3]) then holder = top[1] end
    local oldest = redis.call('ZRANGE', base .. 'owner:' .. holder, 0, 0)[1]
    if oldest then victim = holder .. oldest end
  end
  -- A count that disagrees with the lists (a key lost) still frees a place: the oldest overall.
  if not victim or dropListed(victim) == 0 then dropListed(first) end
end

local order = redis.call('INCR', KEYS[6])
local rest = ARGV[7] .. ARGV[8] .. ARGV[11]
redis.call('SET', KEYS[5], ARGV[9], 'PX', ARGV[3])
redis.call('ZADD', KEYS[3], order, rest)
redis.call('ZADD', KEYS[1], order, ARGV[6] .. rest)
redis.call('ZADD', KEYS[2], redis.call('ZCARD', KEYS[3]), ARGV[6])
redis.call('SET', KEYS[4], ARGV[7] .. ARGV[11] .. '|' .. ARGV[10], 'PX', ARGV[15])
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[3], KEYS[6]}) do redis.call('PEXPIRE', key, ARGV[3]) end
return {0}
`;

type IssueCommand = (...args: (string | Buffer)[]) => Promise<unknown>;

/**
 * Download links in Redis, so that any replica serves a link another made. The value stands for
 * a caller's credential, so Redis never holds it readable, nor the id that unlocks it: the key is
 * derived from the id, and the value is sealed (AES-256-GCM) under another key derived from the
 * id. Whoever reads Redis learns neither the link nor the credential; whoever holds the link gets
 * exactly what the link gives. No secret needs sharing between replicas for this.
 *
 * Links are counted per owner and in all, as in memory, in one script so that replicas agree. The
 * owner and the value are known there by HKDF digests of themselves (every replica must derive
 * the same without a shared secret), so whoever reads Redis can confirm a guessed owner or value,
 * never read one; the value's newest link id is sealed under a key derived from the value.
 */
export function createRedisDownloadStore<T>({ url, prefix, ttlMs, read, service, maxValueBytes = 16 * 1024, now = Date.now, commandTimeoutMs = 2000, logger, ...given }: RedisDownloadStoreOptions<T>): DownloadStore<T> {
  const { maxEntries, maxEntriesPerOwner, ownerOf } = downloadBounds(given);
  // Redis expires keys in whole milliseconds.
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be a positive integer; got ${ttlMs}`);
  const redis = createRequestRedis(url, { commandTimeoutMs, onError: (error) => logger?.warn({ error: error.message }, 'download link store: Redis connection failed') });
  redis.defineCommand('issueDownloadLink', { numberOfKeys: 6, lua: ISSUE });
  const issueScript = (redis as Redis & { issueDownloadLink: IssueCommand }).issueDownloadLink.bind(redis);
  const base = `${prefix}:download:`;
  const keyOf = (id: string) => `${base}${digest(id, 'lookup')}`;
  const unavailable = () => graphError(`${service}: download links are kept in Redis, which did not answer; try again shortly`, { code: ErrorCode.UpstreamUnavailable, service });

  function seal(key: Buffer, plain: Buffer): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
  }

  function open(key: Buffer, stored: Buffer): unknown {
    const decipher = createDecipheriv('aes-256-gcm', key, stored.subarray(0, 12));
    decipher.setAuthTag(stored.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(stored.subarray(28)), decipher.final()]).toString('utf8')) as unknown;
  }

  /** The link a value's pointer held, or undefined when it is not one this store sealed for that value. */
  function heldLink(valueText: string, sealed: unknown, at: number): { id: string; expiresAt: number } | undefined {
    if (typeof sealed !== 'string' || sealed.length > MAX_POINTER) return undefined;
    const stored = Buffer.from(sealed, 'base64url');
    if (stored.length <= 28) return undefined;
    let held: { i?: unknown; e?: unknown };
    try {
      held = open(derive(valueText, 'value seal'), stored) as { i?: unknown; e?: unknown };
    } catch {
      return undefined;
    }
    const { i: id, e: expiresAt } = held;
    if (typeof id !== 'string' || !DOWNLOAD_ID.test(id) || typeof expiresAt !== 'number' || !(at < expiresAt - ttlMs / 2 && at >= expiresAt - ttlMs)) return undefined;
    return { id, expiresAt };
  }

  return {
    async issue(value) {
      const at = now();
      const id = newDownloadId();
      const expiresAt = at + ttlMs;
      const plain = Buffer.from(JSON.stringify({ e: expiresAt, v: value }));
      if (plain.length > maxValueBytes) {
        throw graphError(`${service}: the credential headers are too long to stand behind a download link (at most ${maxValueBytes} bytes)`, { code: ErrorCode.BadUserInput, service });
      }
      const valueText = canonical(value);
      const [owner, link, valueDigest] = [digest(canonical(ownerOf(value)), 'owner'), digest(id, 'lookup'), digest(valueText, 'value lookup')];
      const sealedId = seal(derive(valueText, 'value seal'), Buffer.from(JSON.stringify({ i: id, e: expiresAt }))).toString('base64url');
      const keys = [`${base}all`, `${base}owners`, `${base}owner:${owner}`, `${base}value:${valueDigest}`, `${base}${link}`, `${base}seq`];
      const run = (fresh: boolean) =>
        issueScript(
          ...keys,
          ...[at, ttlMs / 2, 2 * ttlMs, maxEntries, maxEntriesPerOwner, owner, link, valueDigest].map(String),
          seal(derive(id, 'seal'), plain),
          ...[sealedId, expiresAt, base, at - ttlMs, fresh ? '1' : '0', ttlMs].map(String),
        );
      try {
        const answer = await run(false);
        if (!Array.isArray(answer) || (answer[0] !== 0 && answer[0] !== 1)) throw new Error('Redis answered something that is not a link');
        if (answer[0] === 0) return { id, expiresAt };
        const held = heldLink(valueText, answer[1], at);
        if (held) return held;
        // A pointer this store cannot open is no link: a fresh one replaces it.
        const fresh = await run(true);
        if (!Array.isArray(fresh) || fresh[0] !== 0) throw new Error('Redis answered something that is not a link');
        return { id, expiresAt };
      } catch (error) {
        logger?.warn({ error: (error as Error).message }, 'download link not stored');
        throw unavailable();
      }
    },
    async find(id) {
      let stored: Buffer;
      try {
        // Read no more than a link this store wrote can be: a bigger entry is not one.
        stored = await redis.getrangeBuffer(keyOf(id), 0, maxValueBytes + 64);
      } catch (error) {
        logger?.warn({ error: (error as Error).message }, 'download link not read');
        throw unavailable();
      }
      if (stored.length < 28 || stored.length > maxValueBytes + 64) return undefined;
      let entry: { e?: unknown; v?: unknown };
      try {
        entry = open(derive(id, 'seal'), stored) as { e?: unknown; v?: unknown };
      } catch {
        // Not sealed under this id: nothing this graph wrote for this link.
        return undefined;
      }
      const value = typeof entry.e === 'number' ? read(entry.v) : undefined;
      if (value === undefined || typeof entry.e !== 'number') return undefined;
      // The store's clock decides, as in memory: Redis's own expiry only frees the space.
      if (now() > entry.e + ttlMs) return undefined;
      return now() > entry.e ? 'expired' : value;
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
