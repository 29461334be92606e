import { createHash } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { createBoundedCache } from '../../lib/boundedCache.ts';

/** Codes that say the credential itself was refused: worth remembering, unlike a passing failure. */
const VERDICTS = new Set(['UNAUTHENTICATED', 'FORBIDDEN']);

export interface CredentialChecks {
  /**
   * Runs `verify` for this credential, or answers as it answered a moment ago: a valid credential
   * passes, a refused one is refused again with the same error, and concurrent checks of one
   * credential share one upstream call. Passing failures (timeouts, 5xx) are not remembered.
   */
  check(credential: string | undefined, verify: () => Promise<void>): Promise<void>;
}

export interface CredentialChecksOptions {
  /** How long an answer is remembered; 0 remembers nothing. @default 30000 */
  ttlMs?: number;
  /** Distinct credentials remembered (the oldest forgotten first). @default 10000 */
  capacity?: number;
  /** @default Date.now */
  now?: () => number;
}

interface Remembered {
  at: number;
  outcome: Promise<void>;
}

/**
 * Remembers, briefly, what the upstream said of a credential, so a client opening a hundred
 * subscriptions (or one with a bogus token opening them in a loop) costs one upstream check, not
 * one per subscribe. Keyed by a SHA-256 of the whole credential: a result is only ever reused for
 * the very same credential, never for another, and the cache holds no credential itself.
 */
export function createCredentialChecks({ ttlMs = 30_000, capacity = 10_000, now = Date.now }: CredentialChecksOptions = {}): CredentialChecks {
  const remembered = createBoundedCache<Remembered>(capacity);
  return {
    check(credential, verify) {
      if (credential === undefined || ttlMs === 0) return verify();
      const key = createHash('sha256').update(credential).digest('hex');
      const entry = remembered.get(key);
      if (entry && now() - entry.at < ttlMs) return entry.outcome;
      const outcome = verify();
      const fresh: Remembered = { at: now(), outcome };
      remembered.set(key, fresh);
      outcome.catch((error: unknown) => {
        const code = error instanceof GraphQLError ? String(error.extensions?.code) : undefined;
        // Only a verdict on the credential is worth repeating; forget anything else at once.
        if ((!code || !VERDICTS.has(code)) && remembered.get(key) === fresh) remembered.set(key, { at: -Infinity, outcome });
      });
      return outcome;
    },
  };
}
