import { ConfigError, readBoolean, readInt, readUrl, type Env } from '../../lib/config.ts';
import type { AuthSettings } from './authenticate.ts';
import type { ExplorerHintSettings } from './explorerHints.ts';

const list = (raw: string | undefined) => (raw ?? '').split(/[\s,]+/).filter(Boolean);

/** The graph's own OAuth 2.0 settings; `GATEWAY_AUTH=oauth2` needs at least one way to know a caller. */
export function readAuthSettings(env: Env): { auth: AuthSettings; explorer: ExplorerHintSettings } {
  const mode = (env.GATEWAY_AUTH ?? 'off').toLowerCase();
  if (mode !== 'off' && mode !== 'oauth2') throw new ConfigError(`GATEWAY_AUTH must be off or oauth2; got "${env.GATEWAY_AUTH}".`);
  const auth: AuthSettings = {
    mode,
    required: readBoolean(env, 'AUTH_REQUIRED', true),
    jwksUrl: readUrl(env, 'AUTH_JWKS_URL'),
    issuer: env.AUTH_ISSUER || undefined,
    audience: env.AUTH_AUDIENCE || undefined,
    introspectionUrl: readUrl(env, 'AUTH_INTROSPECTION_URL'),
    introspectionClientId: env.AUTH_INTROSPECTION_CLIENT_ID || undefined,
    introspectionClientSecret: env.AUTH_INTROSPECTION_CLIENT_SECRET || undefined,
    clockSkewSeconds: readInt(env, 'AUTH_CLOCK_SKEW_SECONDS', 30, { min: 0, max: 300 }),
    introspectionCacheSeconds: readInt(env, 'AUTH_INTROSPECTION_CACHE_SECONDS', 30, { min: 0, max: 3600 }),
    jwksCooldownSeconds: readInt(env, 'AUTH_JWKS_COOLDOWN_SECONDS', 30, { min: 0, max: 3600 }),
    trustedProxies: list(env.TRUSTED_PROXIES),
    credentialsFile: env.AUTH_CREDENTIALS_FILE || undefined,
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
  };
  if (mode === 'oauth2') {
    if (!auth.jwksUrl && !auth.introspectionUrl && auth.trustedProxies.length === 0) {
      throw new ConfigError('GATEWAY_AUTH=oauth2 needs AUTH_JWKS_URL (with AUTH_ISSUER), AUTH_INTROSPECTION_URL, or TRUSTED_PROXIES (an API gateway that validates tokens itself).');
    }
    if (auth.jwksUrl && !auth.issuer) throw new ConfigError('AUTH_JWKS_URL needs AUTH_ISSUER: a JWT is only accepted from the issuer named.');
  }
  const tokenUrl = readUrl(env, 'AUTH_TOKEN_URL');
  const authorizeUrl = readUrl(env, 'AUTH_AUTHORIZE_URL');
  const issuerUrl = auth.issuer && /^https?:\/\//.test(auth.issuer) ? [auth.issuer] : [];
  return {
    auth,
    explorer: {
      authorizationServers: issuerUrl,
      tokenUrl,
      authorizeUrl,
      scopes: list(env.AUTH_SCOPES),
      api: env.AUTH_EXPLORER_API || undefined,
      consumer: env.AUTH_EXPLORER_CONSUMER || undefined,
      // The gateway reads the explorer's settings with the same administrator token the subgraph checks.
      adminToken: env.GATEWAY_ADMIN_TOKEN || undefined,
    },
  };
}
