import { randomBytes } from 'node:crypto';
import { seededRandom, uuidFrom } from '../kit/random.ts';

/**
 * The state of an emulated API gateway (an older Kong release, 0.x admin API): APIs, consumers,
 * their OAuth 2.0 applications, OAuth 2.0 plugins, and what the plugin's proxy-side endpoints
 * issued. Starts empty: everything is made through the admin interface, as on a fresh gateway.
 */

/** The plugin's defaults, read from the real plugin's schema (kong/plugins/oauth2/schema.lua, 0.13). */
export const TOKEN_EXPIRATION_SECONDS = 7200;
export const REFRESH_TOKEN_TTL_SECONDS = 1_209_600;
/** An authorization code lives 300 s and is used once (access.lua inserts it with `ttl = 300`). */
export const AUTHORIZATION_CODE_TTL_MS = 300_000;

export interface EmulatedApi {
  id: string;
  name: string;
  /** Each as it was given (possibly empty), absent when never given: 0.x answers the two apart (`kongApi` in admin.ts). */
  hosts?: string[];
  uris?: string[];
  methods?: string[];
  upstream_url: string;
  strip_uri: boolean;
  preserve_host: boolean;
  https_only: boolean;
  http_if_terminated: boolean;
  created_at: number;
}

export interface EmulatedConsumer {
  id: string;
  username: string | null;
  custom_id: string | null;
  created_at: number;
}

export interface EmulatedCredential {
  id: string;
  consumer_id: string;
  name: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string[];
  created_at: number;
}

export interface OAuth2Config {
  /** Null when never given; empty when given blank (`config.scopes=`), which 0.x keeps. */
  scopes: string[] | null;
  mandatory_scope: boolean;
  provision_key: string;
  token_expiration: number;
  enable_authorization_code: boolean;
  enable_implicit_grant: boolean;
  enable_client_credentials: boolean;
  enable_password_grant: boolean;
  hide_credentials: boolean;
  accept_http_if_already_terminated: boolean;
  anonymous: string;
  global_credentials: boolean;
  auth_header_name: string;
  refresh_token_ttl: number;
}

export interface EmulatedPlugin {
  id: string;
  name: 'oauth2';
  /**
   * Where the plugin runs: one API, or (Kong 0.13's Routes and Services, which the emulator does
   * not model) one route or one service. None of the three: every API.
   */
  api_id?: string;
  route_id?: string;
  service_id?: string;
  config: OAuth2Config;
  enabled: boolean;
  created_at: number;
}

export interface IssuedCode {
  code: string;
  api_id: string | null;
  credential_id: string;
  authenticated_userid: string | null;
  scope: string;
  expiresAt: number;
}

export interface IssuedToken {
  access_token: string;
  refresh_token: string | null;
  api_id: string | null;
  credential_id: string;
  authenticated_userid: string | null;
  scope: string;
  expires_in: number;
  issuedAt: number;
}

/** How the admin interface words its errors: the 0.x release's flat `{field: message}`, or the structured bodies of later releases. */
export type Dialect = 'flat' | 'structured';

export interface GatewayAdminState {
  apis: EmulatedApi[];
  consumers: EmulatedConsumer[];
  credentials: EmulatedCredential[];
  plugins: EmulatedPlugin[];
  codes: IssuedCode[];
  tokens: IssuedToken[];
  dialect: Dialect;
  /** Ids are deterministic after every reset; secrets are not (see `randomSecret`). */
  nextId: () => string;
}

export function seedGatewayAdmin(): GatewayAdminState {
  const random = seededRandom(0x6b6f6e67);
  return { apis: [], consumers: [], credentials: [], plugins: [], codes: [], tokens: [], dialect: 'flat', nextId: () => uuidFrom(random) };
}

/** The real gateway's `utils.random_string`: 32 hex characters. Random, so no test can lean on a guessable secret. */
export function randomSecret(): string {
  return randomBytes(16).toString('hex');
}

/** The administrator token of `npm start`'s demo stack (the subgraph's `GATEWAY_ADMIN_TOKEN` when its upstream is this emulator). */
export const DEMO_ADMIN_TOKEN = 'demo-gateway-admin-token-2c7e9a4f1b8d3e6a';
