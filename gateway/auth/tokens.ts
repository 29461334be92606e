import { createHash } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type FetchImplementation } from 'jose';
import { getGlobalDispatcher } from 'undici';
import { AnswerTooLarge, exchangeBuffered, watchCancellation } from '../../lib/bufferedExchange.ts';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { originAndPath } from '../../lib/http.ts';
import { parseScopes, type Principal } from './principal.ts';

export interface TokenSettings {
  /** The authorization server's JWKS: JWTs are verified against it (keys cached, rotated by `kid`). */
  jwksUrl?: string | undefined;
  /** Expected `iss`; required with `jwksUrl`. */
  issuer?: string | undefined;
  /** Expected `aud`. */
  audience?: string | undefined;
  /** RFC 7662 endpoint for opaque tokens. */
  introspectionUrl?: string | undefined;
  /** The graph's own client credentials at the introspection endpoint (HTTP Basic). */
  introspectionClientId?: string | undefined;
  introspectionClientSecret?: string | undefined;
  /** Leeway on `exp` and `nbf`. @default 30 */
  clockSkewSeconds?: number;
  /** How long an introspection answer is reused; never past the token's own `exp`. @default 30 */
  introspectionCacheSeconds?: number;
  /** After a JWKS fetch, how long before an unknown `kid` may fetch it again (a flood of forged kids costs one fetch per period). @default 30 */
  jwksCooldownSeconds?: number;
  /** Deadline of one introspection call. @default 5000 */
  timeoutMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** Why a bearer token was refused; the message names no token and goes to the log, not the caller. */
export class TokenRefused extends Error {
  override name = 'TokenRefused';
  constructor(
    readonly reason: string,
    /** The authorization server could not be asked: the caller may try again. */
    readonly unavailable = false,
  ) {
    super(reason);
  }
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Tokens are short; a longer one is refused before any work (or any cache key) is spent on it. */
const MAX_TOKEN_LENGTH = 8192;
const MAX_INTROSPECTION_BYTES = 64 * 1024;
/** A key set is a few keys; a large one holds a few hundred KiB. */
const MAX_JWKS_BYTES = 512 * 1024;

/**
 * jose's errors that fault the token itself, read against a key set that was read. Anything else
 * (jose's plain error for a key set answering other than 200 or not JSON, a malformed set, a
 * timeout, a network error) says the keys could not be read: refusing the token as invalid then
 * would make clients discard good tokens during an authorization server's outage.
 */
const TOKEN_FAULTS = [
  joseErrors.JWSInvalid,
  joseErrors.JWTInvalid,
  joseErrors.JWTClaimValidationFailed,
  // Not a kind of JWTClaimValidationFailed in jose 6, so named apart.
  joseErrors.JWTExpired,
  joseErrors.JWSSignatureVerificationFailed,
  // No key of the set has the token's kid (a reachable set: an unreachable one throws before this).
  joseErrors.JWKSNoMatchingKey,
  joseErrors.JWKSMultipleMatchingKeys,
  // The token names an algorithm a key set cannot hold (`none`, HMAC) or a `crit` header jose does not know.
  joseErrors.JOSEAlgNotAllowed,
  joseErrors.JOSENotSupported,
];

type Claims = { sub?: unknown; exp?: unknown; scope?: unknown; scp?: unknown; client_id?: unknown; azp?: unknown };

const principalOf = (claims: Claims, via: Principal['via']): Principal => {
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined;
  const subject = typeof claims.sub === 'string' ? claims.sub : undefined;
  const id = clientId ?? subject;
  if (!id) throw new TokenRefused('the token names neither a client nor a subject');
  return { id, subject, clientId, scopes: parseScopes(claims.scope ?? claims.scp), via, expiresAt: typeof claims.exp === 'number' ? claims.exp : undefined };
};

/**
 * jose's key set fetch, read whole but never past MAX_JWKS_BYTES: with its own `fetch` it would
 * read any length of answer within its deadline. No redirect is followed, as jose asks.
 */
const jwksFetch: FetchImplementation = async (url, { headers, signal }) => {
  const answer = await exchangeBuffered(getGlobalDispatcher(), { ...originAndPath(url), method: 'GET', headers: Object.fromEntries(headers) }, watchCancellation(signal), MAX_JWKS_BYTES);
  if (answer.status < 200 || answer.status > 599) throw new Error(`the key set answered HTTP ${answer.status}`);
  return new Response(answer.body, { status: answer.status });
};

/** Validates bearer tokens by standards: JWTs against a JWKS, opaque tokens by introspection. */
export function createTokenVerifier(settings: TokenSettings) {
  const { clockSkewSeconds = 30, introspectionCacheSeconds = 30, jwksCooldownSeconds = 30, timeoutMs = 5000, now = Date.now } = settings;
  const jwks = settings.jwksUrl ? createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: timeoutMs, cooldownDuration: jwksCooldownSeconds * 1000, cacheMaxAge: 10 * 60_000, [customFetch]: jwksFetch }) : undefined;
  const introspectionTarget = settings.introspectionUrl ? originAndPath(settings.introspectionUrl) : undefined;
  // Keyed by the token's hash: the cache never holds a token.
  const introspected = createBoundedCache<{ principal: Principal | TokenRefused; until: number }>(10_000);

  async function verifyJwt(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, jwks!, {
        ...(settings.issuer ? { issuer: settings.issuer } : {}),
        ...(settings.audience ? { audience: settings.audience } : {}),
        clockTolerance: clockSkewSeconds,
        currentDate: new Date(now()),
        requiredClaims: ['exp'],
      });
      return principalOf(payload, 'jwt');
    } catch (error) {
      if (error instanceof TokenRefused) throw error;
      if (TOKEN_FAULTS.some((fault) => error instanceof fault)) throw new TokenRefused(`the token is not valid (${(error as joseErrors.JOSEError).code})`);
      throw new TokenRefused('the authorization server\'s keys could not be read', true);
    }
  }

  async function introspect(token: string): Promise<Principal> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = introspected.get(key);
    if (cached && cached.until > now()) {
      if (cached.principal instanceof TokenRefused) throw cached.principal;
      return cached.principal;
    }
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (settings.introspectionClientId) {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(settings.introspectionClientId)}:${encodeURIComponent(settings.introspectionClientSecret ?? '')}`).toString('base64')}`;
    }
    let answer: { active?: unknown; exp?: unknown; aud?: unknown; iss?: unknown } & Record<string, unknown>;
    try {
      // Read whole but never past the cap, declared or counted, and within one deadline for the
      // whole call: an endpoint that trickles or floods its answer costs at most that.
      const answered = await exchangeBuffered(
        getGlobalDispatcher(),
        { ...introspectionTarget!, method: 'POST', headers, body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(), headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
        watchCancellation(AbortSignal.timeout(timeoutMs)),
        MAX_INTROSPECTION_BYTES,
      );
      if (answered.status !== 200) throw new TokenRefused(`introspection answered HTTP ${answered.status}`, true);
      const parsed: unknown = JSON.parse(answered.body);
      // `null`, a number or a list would otherwise be read as an answer.
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TokenRefused('introspection answered something that is not an object', true);
      answer = parsed as typeof answer;
    } catch (error) {
      if (error instanceof TokenRefused) throw error;
      if (error instanceof AnswerTooLarge) throw new TokenRefused('introspection answered too much', true);
      throw new TokenRefused('the introspection endpoint could not be reached', true);
    }
    const nowSeconds = now() / 1000;
    let outcome: Principal | TokenRefused;
    if (answer.active !== true) outcome = new TokenRefused('the token is not active');
    else if (typeof answer.exp === 'number' && answer.exp + clockSkewSeconds < nowSeconds) outcome = new TokenRefused('the token has expired');
    else if (settings.audience && !(Array.isArray(answer.aud) ? answer.aud : [answer.aud]).includes(settings.audience)) outcome = new TokenRefused('the token is for another audience');
    else if (settings.issuer && answer.iss !== undefined && answer.iss !== settings.issuer) outcome = new TokenRefused('the token is from another issuer');
    else {
      try {
        outcome = principalOf(answer, 'introspection');
      } catch (error) {
        outcome = error as TokenRefused;
      }
    }
    // Reused briefly, and never past the token's own expiry; a refusal is remembered for a moment too,
    // so a flood of one bad token costs one call to the authorization server.
    const expiry = outcome instanceof TokenRefused ? now() + 5_000 : typeof answer.exp === 'number' ? answer.exp * 1000 : Infinity;
    introspected.set(key, { principal: outcome, until: Math.min(now() + introspectionCacheSeconds * 1000, expiry) });
    if (outcome instanceof TokenRefused) throw outcome;
    return outcome;
  }

  return {
    async verify(token: string): Promise<Principal> {
      if (token.length > MAX_TOKEN_LENGTH) throw new TokenRefused('the token is too long');
      if (jwks && JWT_SHAPE.test(token)) return verifyJwt(token);
      if (settings.introspectionUrl) return introspect(token);
      throw new TokenRefused(jwks ? 'the token is not a JWT' : 'no way to validate tokens is configured');
    },
  };
}

export type TokenVerifier = ReturnType<typeof createTokenVerifier>;
