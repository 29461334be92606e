import { createHash } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { SYSTEM_CLOCK, type DeadlineClock } from '../../lib/deadlines.ts';

/** Codes that say the credential itself was refused: worth remembering, unlike a passing failure. */
const VERDICTS = new Set(['UNAUTHENTICATED', 'FORBIDDEN']);

/** How often an open subscription's credential is checked again when answers are not remembered (`ttlMs: 0`). */
export const DEFAULT_CREDENTIAL_CHECK_TTL_MS = 30_000;

const isVerdict = (error: unknown): error is GraphQLError => error instanceof GraphQLError && VERDICTS.has(String(error.extensions?.code));

export interface CredentialChecks {
  /**
   * Runs `verify` for this credential, or answers as it answered a moment ago: a valid credential
   * passes, a refused one is refused again with the same error, and concurrent checks of one
   * credential share one upstream call. Passing failures (timeouts, 5xx) are not remembered.
   */
  check(credential: string | undefined, verify: () => Promise<void>): Promise<void>;
  /**
   * Keeps checking a credential while a subscription streams with it: once per `ttlMs` for the
   * credential, however many subscriptions in this process hold it (each tick is a `check`, so it
   * shares the remembered answer and any call under way). When the service refuses the credential
   * (`UNAUTHENTICATED`, `FORBIDDEN`), `onRefused` is called once with that error for every
   * subscription of it, and their watches end; a passing failure is tried again a `ttlMs` later.
   * Returns what stops this subscription's watch. Without a credential, nothing is watched.
   */
  watch(credential: string | undefined, verify: () => Promise<void>, onRefused: (error: GraphQLError) => void): () => void;
  /** Credentials watched now (each is one upstream check per `ttlMs`). */
  watched(): number;
}

export interface CredentialChecksOptions {
  /** How long an answer is remembered, and how often a watched credential is checked again; 0 remembers nothing (and checks watched ones every 30 s). @default 30000 */
  ttlMs?: number;
  /** Distinct credentials remembered (the oldest forgotten first). @default 10000 */
  capacity?: number;
  /** Timers of the watches (tests pass a manual clock). @default SYSTEM_CLOCK */
  clock?: DeadlineClock;
  /** @default clock.now */
  now?: () => number;
}

interface Remembered {
  at: number;
  outcome: Promise<void>;
}

interface Watcher {
  verify: () => Promise<void>;
  onRefused: (error: GraphQLError) => void;
}

/** The subscriptions of one credential: one timer, one check per period for all of them. */
interface Watch {
  key: string;
  watchers: Set<Watcher>;
  cancelTimer: (() => void) | undefined;
}

/**
 * Remembers, briefly, what the upstream said of a credential, so a client opening a hundred
 * subscriptions (or one with a bogus token opening them in a loop) costs one upstream check, not
 * one per subscribe. Keyed by a SHA-256 of the whole credential: a result is only ever reused for
 * the very same credential, never for another, and the cache holds no credential itself.
 *
 * Events reach subscribers from webhooks, which never carry the subscriber's credential: without
 * `watch`, a key revoked upstream would go on receiving events for as long as its socket stayed open.
 */
export function createCredentialChecks({ ttlMs = DEFAULT_CREDENTIAL_CHECK_TTL_MS, capacity = 10_000, clock = SYSTEM_CLOCK, now = clock.now }: CredentialChecksOptions = {}): CredentialChecks {
  const remembered = createBoundedCache<Remembered>(capacity);
  // One entry per credential some open subscription holds: bounded by the subscriptions the gateway lets in.
  const watches = new Map<string, Watch>();
  const periodMs = ttlMs > 0 ? ttlMs : DEFAULT_CREDENTIAL_CHECK_TTL_MS;
  const keyOf = (credential: string) => createHash('sha256').update(credential).digest('hex');

  function checkKey(key: string, verify: () => Promise<void>): Promise<void> {
    if (ttlMs === 0) return verify();
    const entry = remembered.get(key);
    if (entry && now() - entry.at < ttlMs) return entry.outcome;
    const outcome = verify();
    const fresh: Remembered = { at: now(), outcome };
    remembered.set(key, fresh);
    outcome.catch((error: unknown) => {
      // Only a verdict on the credential is worth repeating; forget anything else at once.
      if (!isVerdict(error) && remembered.get(key) === fresh) remembered.set(key, { at: -Infinity, outcome });
    });
    return outcome;
  }

  /** The next check falls when the answer it would reuse expires: a revocation is seen within `ttlMs` of the last call. */
  function schedule(watch: Watch): void {
    const entry = ttlMs === 0 ? undefined : remembered.get(watch.key);
    const age = entry ? now() - entry.at : Infinity;
    const waitMs = age >= 0 && age < periodMs ? periodMs - age : periodMs;
    watch.cancelTimer = clock.after(waitMs, () => void tick(watch));
  }

  async function tick(watch: Watch): Promise<void> {
    watch.cancelTimer = undefined;
    // Any subscription's client will do: they all carry the same credential.
    const first = watch.watchers.values().next().value;
    if (!first || watches.get(watch.key) !== watch) return;
    try {
      await checkKey(watch.key, first.verify);
    } catch (error) {
      if (isVerdict(error)) {
        if (watches.get(watch.key) === watch) watches.delete(watch.key);
        const refused = [...watch.watchers];
        watch.watchers.clear();
        for (const watcher of refused) watcher.onRefused(error);
        return;
      }
      // A timeout, a 5xx, a rate limit, an open breaker: says nothing of the credential. Keep streaming.
    }
    if (watches.get(watch.key) === watch && watch.watchers.size > 0) schedule(watch);
  }

  return {
    check(credential, verify) {
      if (credential === undefined) return verify();
      return checkKey(keyOf(credential), verify);
    },
    watch(credential, verify, onRefused) {
      if (credential === undefined) return () => {};
      const key = keyOf(credential);
      let watch = watches.get(key);
      if (!watch) {
        watch = { key, watchers: new Set(), cancelTimer: undefined };
        watches.set(key, watch);
        schedule(watch);
      }
      const watcher: Watcher = { verify, onRefused };
      watch.watchers.add(watcher);
      const held = watch;
      return () => {
        if (!held.watchers.delete(watcher) || held.watchers.size > 0) return;
        held.cancelTimer?.();
        held.cancelTimer = undefined;
        if (watches.get(key) === held) watches.delete(key);
      };
    },
    watched: () => watches.size,
  };
}
