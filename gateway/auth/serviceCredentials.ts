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
  /** The service credentials the operator mapped to this principal; empty when none. */
  credentialsFor(principalId: string): Promise<ServiceCredentials>;
  close(): Promise<void>;
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

/**
 * Service credentials held by the graph, so that a partner signed in with OAuth 2.0 never sees or
 * sends an upstream key: from a file read at start, and from Redis (a hash per principal, read
 * through a short cache) when the operator keeps them there.
 */
export function createCredentialStore({
  file,
  given = {},
  redisUrl,
  cacheMs = 30_000,
}: {
  file?: string | undefined;
  given?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  redisUrl?: string | undefined;
  cacheMs?: number;
}): CredentialStore {
  const fromFile = new Map<string, ServiceCredentials>();
  for (const [principal, entries] of Object.entries(given)) fromFile.set(principal, onlyCredentialHeaders('principal credentials', entries));
  if (file) {
    let parsed: z.infer<typeof credentialsFile>;
    try {
      parsed = credentialsFile.parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch (error) {
      // The message names the file and the shape expected, never a value from it.
      throw new ConfigError(`AUTH_CREDENTIALS_FILE (${file}) must be JSON like {"principals": {"<client id>": {"x-recognition-token": "..."}}}${error instanceof z.ZodError ? `: ${error.issues[0]?.path.join('.')} ${error.issues[0]?.message}` : ''}.`);
    }
    for (const [principal, entries] of Object.entries(parsed.principals)) fromFile.set(principal, onlyCredentialHeaders('AUTH_CREDENTIALS_FILE', entries));
  }
  const redis = redisUrl ? createRequestRedis(redisUrl) : undefined;
  const cached = createBoundedCache<{ credentials: ServiceCredentials; until: number }>(10_000);

  return {
    async credentialsFor(principalId) {
      const own = fromFile.get(principalId) ?? {};
      if (!redis) return own;
      const hit = cached.get(principalId);
      if (hit && hit.until > Date.now()) return { ...own, ...hit.credentials };
      let stored: Record<string, string> = {};
      try {
        stored = await redis.hgetall(`${REDIS_PREFIX}${principalId}`);
      } catch {
        // Redis away: what the file holds still works; the caller's own headers too.
      }
      const credentials: Record<string, string> = {};
      for (const [name, value] of Object.entries(stored)) if (isCredentialHeader(name)) credentials[name.toLowerCase()] = value;
      cached.set(principalId, { credentials, until: Date.now() + cacheMs });
      return { ...own, ...credentials };
    },
    async close() {
      redis?.disconnect();
    },
  };
}
