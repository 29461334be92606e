import { readFileSync } from 'node:fs';
import { createRequestRedis } from '../../lib/requestRedis.ts';
import { z } from 'zod';
import { ConfigError } from '../../lib/config.ts';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { ALL_CREDENTIAL_HEADERS } from '../../lib/services.ts';

const isCredentialHeader = (name: string) => ALL_CREDENTIAL_HEADERS.includes(name.toLowerCase());

/** Principal id to the REST services' credentials, as gateway header names to values. */
const credentialsFile = z.object({ principals: z.record(z.string().min(1), z.record(z.string(), z.string().min(1))) });

export type ServiceCredentials = Readonly<Record<string, string>>;

export interface CredentialStore {
  /**
   * The service credentials the operator mapped to this principal; empty when none. Rejects with
   * `CredentialsUnavailable` when Redis cannot be read and no recent answer is held: "none" would
   * tell a signed-in partner to send a header it is not meant to have.
   */
  credentialsFor(principalId: string): Promise<ServiceCredentials>;
  close(): Promise<void>;
}

/** Redis did not answer for the principal's credentials: transient, the caller should retry. */
export class CredentialsUnavailable extends Error {
  override name = 'CredentialsUnavailable';
}

const REDIS_PREFIX = 'graph:principal-credentials:';

function onlyCredentialHeaders(source: string, entries: Record<string, string>): ServiceCredentials {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(entries)) {
    if (!isCredentialHeader(name)) throw new ConfigError(`${source}: "${name}" is not a service credential header; use the gateway header names of the README's credentials table.`);
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** After a failed read, how long a principal is served its last values before Redis is asked again. */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * Service credentials held by the graph, so that a partner signed in with OAuth 2.0 never sees or
 * sends an upstream key: from a file read at start, and from Redis (a hash per principal, read
 * through a short cache) when the operator keeps them there.
 *
 * A failed read is never remembered. While Redis fails, a principal read within `staleMs` keeps
 * its last values (removing a credential in Redis cannot take effect while Redis is away anyway);
 * any other principal gets `CredentialsUnavailable`. Each read waits at most the request Redis
 * timeout, and concurrent requests of one principal share one read.
 */
export function createCredentialStore({
  file,
  given = {},
  redisUrl,
  cacheMs = 30_000,
  staleMs = 300_000,
  onReadFailure,
}: {
  file?: string | undefined;
  given?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  redisUrl?: string | undefined;
  /** How long an answer from Redis is used without asking again. @default 30000 */
  cacheMs?: number;
  /** How long after it was read an answer stands in while Redis fails. @default 300000 */
  staleMs?: number;
  /** Told of each failed read (never with a credential). */
  onReadFailure?: ((error: Error) => void) | undefined;
}): CredentialStore {
  const fromFile = new Map<string, ServiceCredentials>();
  for (const [principal, entries] of Object.entries(given)) fromFile.set(principal, onlyCredentialHeaders('principal credentials', entries));
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`AUTH_CREDENTIALS_FILE (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}.`);
    }
    let parsed: z.infer<typeof credentialsFile>;
    try {
      parsed = credentialsFile.parse(JSON.parse(text));
    } catch (error) {
      // The message names the file and the shape expected, never a value from it.
      throw new ConfigError(`AUTH_CREDENTIALS_FILE (${file}) must be JSON like {"principals": {"<client id>": {"x-recognition-token": "..."}}}${error instanceof z.ZodError ? `: ${error.issues[0]?.path.join('.')} ${error.issues[0]?.message}` : ''}.`);
    }
    for (const [principal, entries] of Object.entries(parsed.principals)) fromFile.set(principal, onlyCredentialHeaders('AUTH_CREDENTIALS_FILE', entries));
  }
  // Bounded in time by its command timeout: a silent Redis costs a request that much, never a hang.
  const redis = redisUrl ? createRequestRedis(redisUrl) : undefined;
  const cached = createBoundedCache<{ credentials: ServiceCredentials; readAt: number; until: number }>(10_000);
  // At most one per principal with a request waiting, so as many as requests in flight.
  const reading = new Map<string, Promise<ServiceCredentials>>();

  async function read(principalId: string): Promise<ServiceCredentials> {
    let stored: Record<string, string>;
    try {
      stored = await redis!.hgetall(`${REDIS_PREFIX}${principalId}`);
    } catch (error) {
      onReadFailure?.(error instanceof Error ? error : new Error(String(error)));
      const last = cached.get(principalId);
      const now = Date.now();
      if (last && now - last.readAt <= staleMs) {
        last.until = now + RETRY_AFTER_FAILURE_MS;
        return last.credentials;
      }
      throw new CredentialsUnavailable('the service credentials held for this caller could not be read');
    }
    const credentials: Record<string, string> = {};
    for (const [name, value] of Object.entries(stored)) if (isCredentialHeader(name)) credentials[name.toLowerCase()] = value;
    const now = Date.now();
    cached.set(principalId, { credentials, readAt: now, until: now + cacheMs });
    return credentials;
  }

  return {
    async credentialsFor(principalId) {
      const own = fromFile.get(principalId) ?? {};
      if (!redis) return own;
      const hit = cached.get(principalId);
      if (hit && hit.until > Date.now()) return { ...own, ...hit.credentials };
      let pending = reading.get(principalId);
      if (!pending) {
        pending = read(principalId).finally(() => reading.delete(principalId));
        reading.set(principalId, pending);
      }
      return { ...own, ...(await pending) };
    },
    async close() {
      redis?.disconnect();
    },
  };
}
