import { createHash } from 'node:crypto';
import type { GraphQLError } from 'graphql';
import { ErrorCode, graphError } from '../../lib/errors.ts';
import { AuthFailure, type Authenticated, type Authenticator } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import { isCredentialHeader } from '../credentials.ts';
import type { Headers } from '../context.ts';

/** setTimeout's longest delay: a longer one fires at once (Node warns and uses 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What says who the caller is (the bearer token, an API gateway's consumer headers), as opposed to its service credentials. */
const isIdentityHeader = (name: string) => name === 'authorization' || name.startsWith('x-consumer-') || name.startsWith('x-authenticated-');

const pick = (headers: Headers, keep: (name: string) => boolean): Headers => Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && keep(name)));

/** The service credentials in `headers`, as one comparable string. */
const credentialsOf = (headers: Headers) =>
  JSON.stringify(
    Object.entries(pick(headers, isCredentialHeader)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );

const ended = (message: string) => graphError(`${message}: subscribe again with a fresh token`, { code: ErrorCode.Unauthenticated });
const EXPIRED = 'the bearer token this subscription was made with has expired';
const INVALID = 'the bearer token this subscription was made with is no longer valid (revoked or expired)';
const NARROWED = 'the bearer token this subscription was made with no longer grants what it did';
const WITHDRAWN = 'the service credentials the graph holds for this caller were changed or withdrawn since this subscription was made';

/** A live stream as the watch ends it. */
export interface WatchedStream {
  /** Ends the stream at once with this error, what is queued dropped. */
  cut(error: Error): void;
  whenEnded(callback: () => void): void;
}

interface Member {
  /** The service credentials the caller sent itself: they win over those the graph holds. */
  own: Headers;
  /** The service credentials the stream was opened with. */
  used: string;
  end(error: GraphQLError): void;
}

interface TokenWatch {
  key: string;
  identity: Headers;
  remoteAddress: string | undefined;
  principal: Principal;
  members: Set<Member>;
  expiry?: NodeJS.Timeout | undefined;
  recheck?: NodeJS.Timeout | undefined;
}

/**
 * Keeps what a live subscription was authenticated with true while it streams, as each request's
 * authentication keeps it true for a query: a subscription ends with UNAUTHENTICATED when its token
 * expires (a timer at the moment a request with it would be refused), when the token is refused on
 * a re-check (revoked, for an opaque one), or when the service credentials the graph holds for its
 * principal change. Every subscription of one token shares one watch: one timer, and one re-check
 * per period of the caches that could change the answer (`Authenticator.recheckMs`), so a thousand
 * subscriptions of a token cost what one does. A re-check that fails for a transient reason (the
 * authorization server or Redis away: 503) ends nothing; the next period asks again.
 */
export function createAuthWatch(authenticator: Pick<Authenticator, 'authenticate' | 'acceptedUntil' | 'recheckMs'>) {
  const watches = new Map<string, TokenWatch>();

  const stop = (watch: TokenWatch) => {
    clearTimeout(watch.expiry);
    clearTimeout(watch.recheck);
    if (watches.get(watch.key) === watch) watches.delete(watch.key);
  };

  const endAll = (watch: TokenWatch, error: GraphQLError) => {
    stop(watch);
    for (const member of [...watch.members]) member.end(error);
    watch.members.clear();
  };

  const armExpiry = (watch: TokenWatch, at: number) => {
    const delay = Math.max(0, at - Date.now());
    watch.expiry = setTimeout(() => (delay > MAX_TIMER_MS ? armExpiry(watch, at) : endAll(watch, ended(EXPIRED))), Math.min(delay, MAX_TIMER_MS));
    watch.expiry.unref();
  };

  const scheduleRecheck = (watch: TokenWatch) => {
    const every = authenticator.recheckMs(watch.principal);
    if (every === undefined || watch.members.size === 0) return;
    watch.recheck = setTimeout(() => void recheck(watch), every);
    watch.recheck.unref();
  };

  async function recheck(watch: TokenWatch): Promise<void> {
    watch.recheck = undefined;
    let now: Authenticated;
    try {
      now = await authenticator.authenticate(watch.identity, watch.remoteAddress);
    } catch (error) {
      if (error instanceof AuthFailure && error.status === 401) return endAll(watch, ended(INVALID));
      // The token may be good (the authorization server or Redis is away): the streams go on.
      return scheduleRecheck(watch);
    }
    if (watch.members.size === 0 || watches.get(watch.key) !== watch) return;
    const principal = now.principal;
    // Fields were left out of the stream by the scopes it had: one it lost would leak through it.
    if (!principal || principal.id !== watch.principal.id || [...watch.principal.scopes].some((scope) => !principal.scopes.has(scope))) return endAll(watch, ended(NARROWED));
    const held = pick(now.headers, isCredentialHeader);
    for (const member of [...watch.members]) {
      if (credentialsOf({ ...held, ...member.own }) !== member.used) {
        watch.members.delete(member);
        member.end(ended(WITHDRAWN));
      }
    }
    scheduleRecheck(watch);
  }

  return {
    /**
     * Watches one subscription's stream for as long as it lasts. `headers` are those the caller
     * sent, `caller` what authenticating them gave.
     */
    add(caller: Authenticated & { principal: Principal }, headers: Headers, remoteAddress: string | undefined, stream: WatchedStream): void {
      const identity = pick(headers, isIdentityHeader);
      const { principal } = caller;
      const key = createHash('sha256')
        .update(JSON.stringify([principal.via, principal.id, [...principal.scopes].sort(), Object.entries(identity).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]))
        .digest('base64url');
      let watch = watches.get(key);
      if (!watch) {
        watch = { key, identity, remoteAddress, principal, members: new Set() };
        watches.set(key, watch);
        const until = authenticator.acceptedUntil(principal);
        if (until !== undefined) armExpiry(watch, until);
      }
      const member: Member = { own: pick(headers, isCredentialHeader), used: credentialsOf(caller.headers), end: (error) => stream.cut(error) };
      const first = watch.members.size === 0;
      watch.members.add(member);
      if (first) scheduleRecheck(watch);
      const owner = watch;
      stream.whenEnded(() => {
        owner.members.delete(member);
        if (owner.members.size === 0) stop(owner);
      });
    },
    /** Tokens watched now, for tests. */
    size: () => watches.size,
  };
}
