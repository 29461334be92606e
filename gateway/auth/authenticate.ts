import type { Logger } from '../../lib/logger.ts';
import { makeTrustedProxies } from '../../lib/trustedProxies.ts';
import type { Headers } from '../context.ts';
import { parseScopes, type Principal } from './principal.ts';
import { createCredentialStore, CredentialsUnavailable, type CredentialStore } from './serviceCredentials.ts';
import { createTokenVerifier, TokenRefused, type TokenSettings } from './tokens.ts';

export interface AuthSettings extends TokenSettings {
  /** `oauth2`: the graph validates bearer tokens and enforces `@authenticated` / `@requiresScopes`. */
  mode: 'off' | 'oauth2';
  /** A request without a token is refused (otherwise it is anonymous, and guarded fields are null). @default true */
  required: boolean;
  /** Addresses (or CIDR ranges) of API gateways whose `X-Consumer-*` / `X-Authenticated-*` headers are trusted. */
  trustedProxies: readonly string[];
  /** JSON file mapping principals to service credentials. */
  credentialsFile?: string | undefined;
  /** The same mapping given in code (the demo's partners). */
  principalCredentials?: Readonly<Record<string, Readonly<Record<string, string>>>> | undefined;
  redisUrl?: string | undefined;
  /** Where a client learns how to get a token (RFC 9728), named in `WWW-Authenticate`. */
  resourceMetadataUrl?: string | undefined;
}

export interface Authenticated {
  principal?: Principal | undefined;
  /** The caller's headers, with the service credentials mapped to the principal where the caller sent none. */
  headers: Headers;
}

/** A request the graph refuses before any work: 401 (or 503 when the authorization server, or the Redis holding its credentials, is away). */
export class AuthFailure extends Error {
  override name = 'AuthFailure';
  constructor(
    message: string,
    readonly status: 401 | 503,
    readonly wwwAuthenticate: string,
  ) {
    super(message);
  }
}

/** The headers an OAuth 2.0 API gateway (section D's plugin) adds to what it forwards. */
const PROXY_HEADERS = ['x-consumer-id', 'x-consumer-username', 'x-authenticated-userid', 'x-authenticated-scope'] as const;

/** How long the held credentials read from Redis are used before it is asked again. */
const CREDENTIALS_CACHE_MS = 30_000;
/** The least time between two re-checks of a live subscription's caller, whatever the caches say. */
const MIN_RECHECK_MS = 1_000;

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * Who is calling: a bearer token validated by standards, or the consumer an API gateway in front
 * of the graph vouches for (only when that gateway's address is trusted), or nobody.
 */
export function createAuthenticator(settings: AuthSettings, logger: Logger) {
  const enabled = settings.mode === 'oauth2';
  const verifier = enabled ? createTokenVerifier(settings) : undefined;
  const proxies = makeTrustedProxies(settings.trustedProxies);
  // One line per outage, not one per request while Redis is away.
  let warnedAt = -Infinity;
  const onReadFailure = (error: Error) => {
    if (Date.now() - warnedAt < 10_000) return;
    warnedAt = Date.now();
    logger.warn({ reason: error.message }, 'the service credentials held for principals could not be read from Redis');
  };
  const store: CredentialStore | undefined = enabled ? createCredentialStore({ file: settings.credentialsFile, given: settings.principalCredentials, redisUrl: settings.redisUrl, cacheMs: CREDENTIALS_CACHE_MS, onReadFailure }) : undefined;
  const metadata = settings.resourceMetadataUrl ? `, resource_metadata="${settings.resourceMetadataUrl}"` : '';

  function fromProxy(headers: Headers, remoteAddress: string | undefined): Principal | undefined {
    if (!PROXY_HEADERS.some((name) => headers[name] !== undefined)) return undefined;
    if (!proxies.trusts(remoteAddress)) return undefined;
    const userId = first(headers['x-authenticated-userid']);
    const consumer = first(headers['x-consumer-username']) ?? first(headers['x-consumer-id']);
    const id = consumer ?? userId;
    if (!id) return undefined;
    return { id, subject: userId ?? consumer, clientId: consumer, scopes: parseScopes(first(headers['x-authenticated-scope'])), via: 'proxy' };
  }

  return {
    enabled,
    async authenticate(headers: Headers, remoteAddress: string | undefined): Promise<Authenticated> {
      if (!enabled) return { headers };
      let principal = fromProxy(headers, remoteAddress);
      const authorization = first(headers.authorization);
      if (!principal && authorization !== undefined) {
        const token = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization)?.[1];
        if (!token) throw new AuthFailure('the Authorization header must be "Bearer <token>"', 401, `Bearer error="invalid_request"${metadata}`);
        try {
          principal = await verifier!.verify(token);
        } catch (error) {
          const refused = error instanceof TokenRefused ? error : new TokenRefused('the token could not be validated', true);
          logger.info({ reason: refused.reason }, 'bearer token refused');
          if (refused.unavailable) throw new AuthFailure('the token could not be validated now; try again', 503, `Bearer error="temporarily_unavailable"${metadata}`);
          throw new AuthFailure('the bearer token is not valid (expired, revoked, or not for this graph)', 401, `Bearer error="invalid_token"${metadata}`);
        }
      }
      if (!principal) {
        if (settings.required) throw new AuthFailure('this graph needs a bearer token: Authorization: Bearer <token>', 401, `Bearer${metadata ? ` ${metadata.slice(2)}` : ''}`);
        return { headers };
      }
      let mapped;
      try {
        mapped = await store!.credentialsFor(principal.id);
      } catch (error) {
        if (!(error instanceof CredentialsUnavailable)) throw error;
        // The token is good: retrying soon will do, signing in again would not.
        throw new AuthFailure('the service credentials held for this caller could not be read now; try again', 503, `Bearer error="temporarily_unavailable"${metadata}`);
      }
      // The caller's own service headers win: a partner may bring a credential of its own.
      return { principal, headers: Object.keys(mapped).length ? { ...mapped, ...headers } : headers };
    },
    /**
     * Until when (ms since the epoch) a principal's token is accepted: its expiry plus the leeway a
     * request gets, so that a subscription ends when a request with the same token would be refused.
     * Undefined when the token does not say.
     */
    acceptedUntil(principal: Principal): number | undefined {
      return principal.expiresAt === undefined ? undefined : (principal.expiresAt + (settings.clockSkewSeconds ?? 30)) * 1000;
    },
    /**
     * How often what outlives a request (a subscription) is worth authenticating again: as often as
     * an answer cached for it may change (an introspection, the credentials held in Redis), never
     * more. Undefined when only the token's expiry can change the answer.
     */
    recheckMs(principal: Principal): number | undefined {
      const periods = [
        ...(principal.via === 'introspection' ? [(settings.introspectionCacheSeconds ?? 30) * 1000] : []),
        ...(settings.redisUrl ? [CREDENTIALS_CACHE_MS] : []),
      ];
      return periods.length ? Math.max(MIN_RECHECK_MS, Math.min(...periods)) : undefined;
    },
    close: async () => store?.close(),
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
