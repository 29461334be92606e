import { ConfigError, readInt, readPort, readUrl, type Env } from '../../lib/config.ts';

export interface GatewayAdminConfig {
  port: number;
  host: string;
  /** The spec's `{admin_url}`: the gateway's admin interface. Server configuration only, never a caller's header. */
  apiUrl: string;
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
  timeoutMs: number;
}

export const GATEWAY_ADMIN_SUBGRAPH_PORT = 4006;
export const GATEWAY_ADMIN_EMULATOR_PORT = 4106;
/** A shorter token could be guessed; the same floor as the webhook secrets. */
const MIN_ADMIN_TOKEN_LENGTH = 16;

export function readGatewayAdminConfig(env: Env, overrides: Partial<GatewayAdminConfig> = {}): GatewayAdminConfig {
  const apiUrl =
    overrides.apiUrl ?? readUrl(env, 'GATEWAY_ADMIN_API_URL') ?? `http://127.0.0.1:${readPort(env, 'GATEWAY_ADMIN_EMULATOR_PORT', GATEWAY_ADMIN_EMULATOR_PORT)}`;
  const adminToken = env.GATEWAY_ADMIN_TOKEN?.trim() || undefined;
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(`GATEWAY_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters; unset it to refuse every administration field.`);
  }
  return {
    port: readPort(env, 'GATEWAY_ADMIN_SUBGRAPH_PORT', GATEWAY_ADMIN_SUBGRAPH_PORT),
    host: env.HOST ?? '127.0.0.1',
    adminToken,
    proxyUrl: readUrl(env, 'GATEWAY_ADMIN_PROXY_URL'),
    timeoutMs: readInt(env, 'GATEWAY_ADMIN_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    ...overrides,
    apiUrl,
  };
}
