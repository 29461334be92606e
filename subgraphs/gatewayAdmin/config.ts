import { ConfigError, readUrl, type Env } from '../../lib/config.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { readSubgraphConfig, type SubgraphConfig } from '../kit/subgraphConfig.ts';

/** `apiUrl` is the spec's `{admin_url}`: the gateway's admin interface. Server configuration only, never a caller's header. */
export interface GatewayAdminConfig extends SubgraphConfig {
  /**
   * The administrator's token, compared with the caller's `x-gateway-admin-token`. Unset: no caller
   * is an administrator by token, and every administration field is FORBIDDEN.
   */
  adminToken: string | undefined;
  /**
   * The gateway's public proxy origin, where partners' explorers reach the token endpoint (the
   * guide's "OAuth Host"). Unset: blank, and the explorer uses the API's own host.
   */
  proxyUrl: string | undefined;
}

/** A shorter token could be guessed; the same floor as the webhook secrets. */
const MIN_ADMIN_TOKEN_LENGTH = 16;

export function readGatewayAdminConfig(env: Env, overrides: Partial<GatewayAdminConfig> = {}): GatewayAdminConfig {
  const basics = readSubgraphConfig(env, SERVICE_ENTRY.gatewayAdmin, overrides.apiUrl);
  const adminToken = env.GATEWAY_ADMIN_TOKEN?.trim() || undefined;
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(`GATEWAY_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters; unset it to refuse every administration field.`);
  }
  return {
    ...basics,
    adminToken,
    proxyUrl: readUrl(env, 'GATEWAY_ADMIN_PROXY_URL'),
    ...overrides,
    apiUrl: basics.apiUrl,
  };
}
