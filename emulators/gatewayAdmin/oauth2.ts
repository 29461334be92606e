import type { Reply, Route, RouteRequest } from '../kit/router.ts';
import { fieldsBody } from '../kit/bodies.ts';
import { AUTHORIZATION_CODE_TTL_MS, randomSecret, type EmulatedApi, type EmulatedCredential, type EmulatedPlugin, type GatewayAdminState, type IssuedToken, type OAuth2Config } from './data.ts';

/**
 * The OAuth 2.0 plugin's proxy-side endpoints, `<api prefix>/oauth2/token` and
 * `<api prefix>/oauth2/authorize`, as kong/plugins/oauth2/access.lua (0.13) answers them: the order
 * of its checks (a later failure overwrites an earlier one), its error words, its statuses.
 */

/** How many path segments an API's prefix may have here: each depth is one route. */
const MAX_PREFIX_SEGMENTS = 4;

type Params = Record<string, string | undefined>;
type OAuthError = { error: string; error_description: string };

/** Sandbox (a later task) fetches tokens from a browser page: the token endpoint answers CORS. */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, x-forwarded-proto',
  'access-control-max-age': '600',
};
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const oauthError = (error: string, description: string): OAuthError => ({ error, error_description: description });

/** The real proxy's answer to a path no API claims. */
export const NO_API: Reply = { status: 404, body: { message: 'no route and no API found with those values' } };

/** Parameters may come in the query string or the body; the body wins (`table_merge(uri_args, body_args)`). */
async function parameters(request: RouteRequest): Promise<Params> {
  const out: Params = {};
  for (const [name, value] of request.query) out[name] = value;
  const body = (await fieldsBody(request)) ?? {};
  for (const [name, value] of Object.entries(body)) if (value !== undefined && value !== null) out[name] = Array.isArray(value) ? String(value[0]) : String(value);
  return out;
}

/**
 * The real plugin's `check_https`. The emulator serves plain HTTP, so a request passes only when the
 * plugin accepts HTTP already terminated upstream and the request says it was HTTPS. (The real
 * gateway also wants the sender among its trusted IPs; the emulator trusts every sender.)
 */
function httpsProblem(request: RouteRequest, config: OAuth2Config): OAuthError | undefined {
  if (!config.accept_http_if_already_terminated) return oauthError('access_denied', 'You must use HTTPS');
  const proto = request.headers['x-forwarded-proto'];
  const value = Array.isArray(proto) ? proto.join(',') : proto;
  if (value?.includes(',')) return oauthError('access_denied', 'Only one X-Forwarded-Proto header allowed');
  return value?.trim().toLowerCase() === 'https' ? undefined : oauthError('access_denied', 'You must use HTTPS');
}

/** `retrieve_scopes`: every asked scope must be offered; a mandatory scope must be asked for. */
function scopesOf(params: Params, config: OAuth2Config): { scopes: string[] } | OAuthError {
  const scope = params.scope;
  const scopes: string[] = [];
  if (config.scopes && scope !== undefined) {
    for (const value of scope.split(/\s+/).filter(Boolean)) {
      if (!config.scopes.includes(value)) return oauthError('invalid_scope', `"${value}" is an invalid scope`);
      scopes.push(value);
    }
  } else if (scope === undefined && config.mandatory_scope) {
    return oauthError('invalid_scope', 'You must specify a scope');
  }
  return { scopes };
}

/** `retrieve_client_credentials`: both in the body (or query), else HTTP Basic. */
function clientCredentials(params: Params, request: RouteRequest, config: OAuth2Config): { id?: string; secret?: string; fromHeader: boolean } {
  if (params.client_id && params.client_secret) return { id: params.client_id, secret: params.client_secret, fromHeader: false };
  const header = request.headers[config.auth_header_name.toLowerCase()];
  if (typeof header !== 'string') return { fromHeader: false };
  const match = /^\s*basic\s*(.+)$/i.exec(header);
  if (!match) return { fromHeader: true };
  const decoded = Buffer.from(match[1]!.trim(), 'base64').toString('utf8');
  const [id, secret] = decoded.split(':');
  return { id, secret, fromHeader: true };
}

function withQuery(uri: string, values: Record<string, string | undefined>, inFragment: boolean): string {
  const url = new URL(uri);
  const params = new URLSearchParams(inFragment ? url.hash.replace(/^#/, '') : url.search);
  for (const [name, value] of Object.entries(values)) if (value !== undefined) params.set(name, value);
  if (inFragment) url.hash = params.toString();
  else url.search = params.toString();
  return url.toString();
}

export interface OAuth2Endpoints {
  routes: Route[];
  /** RFC 7662 introspection of a token the emulator issued: what a resource server would ask. */
  introspect(token: string): Record<string, unknown>;
}

/** The API a proxy path belongs to, and the path below its URI: the longest `uris` prefix that matches, as the real router picks. */
export function apiFor(state: GatewayAdminState, path: string): { api: EmulatedApi; rest: string } | undefined {
  let best: { api: EmulatedApi; base: string } | undefined;
  for (const api of state.apis) {
    for (const uri of api.uris ?? []) {
      const base = uri === '/' ? '' : uri.replace(/\/+$/, '');
      if ((path === base || path.startsWith(`${base}/`)) && (!best || base.length > best.base.length)) best = { api, base };
    }
  }
  return best && { api: best.api, rest: path.slice(best.base.length) };
}

/** The plugin that runs for an API: its own, else the global one (on no API, route or service). */
export const pluginFor = (state: GatewayAdminState, api: EmulatedApi): EmulatedPlugin | undefined =>
  state.plugins.find((plugin) => plugin.enabled && plugin.api_id === api.id) ??
  state.plugins.find((plugin) => plugin.enabled && plugin.api_id === undefined && plugin.route_id === undefined && plugin.service_id === undefined);

export function oauth2Endpoints(state: () => GatewayAdminState, now: () => number): OAuth2Endpoints {

  const credentialByClientId = (clientId: string | undefined): EmulatedCredential | undefined =>
    clientId === undefined ? undefined : state().credentials.find((credential) => credential.client_id === clientId);

  function issueToken(config: OAuth2Config, apiId: string | null, credential: EmulatedCredential, userId: string | undefined | null, scope: string, withRefresh: boolean) {
    const refreshToken = withRefresh && config.token_expiration > 0 ? randomSecret() : null;
    const token: IssuedToken = {
      access_token: randomSecret(),
      refresh_token: refreshToken,
      api_id: apiId,
      credential_id: credential.id,
      authenticated_userid: userId ?? null,
      scope,
      expires_in: config.token_expiration,
      issuedAt: now(),
    };
    state().tokens.push(token);
    return {
      access_token: token.access_token,
      token_type: 'bearer',
      ...(config.token_expiration > 0 ? { expires_in: token.expires_in } : {}),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    };
  }

  /** Resolves the API and plugin behind a proxy path, or answers as the emulated proxy does without one. */
  function context(request: RouteRequest, suffix: string): { api: EmulatedApi; plugin: EmulatedPlugin; apiId: string | null } | Reply {
    const api = apiFor(state(), request.path.slice(0, -suffix.length) || '/')?.api;
    if (!api) return NO_API;
    const plugin = pluginFor(state(), api);
    // The real proxy would pass such a request on to the API's upstream; the emulator has none to pass it to.
    if (!plugin) return { status: 404, body: { message: `the OAuth 2.0 plugin is not enabled on API '${api.name}'` } };
    return { api, plugin, apiId: plugin.config.global_credentials ? null : api.id };
  }

  async function token(request: RouteRequest): Promise<Reply> {
    const found = context(request, '/oauth2/token');
    if ('status' in found) return found;
    const { plugin, apiId } = found;
    const config = plugin.config;
    const params = await parameters(request);
    let answer: Record<string, unknown> = {};
    let basicRefused = false;
    const refuse = (error: OAuthError) => {
      answer = { ...error };
    };

    const https = httpsProblem(request, config);
    if (https) refuse(https);
    else {
      const grantType = params.grant_type;
      if (
        !(
          grantType === 'authorization_code' ||
          grantType === 'refresh_token' ||
          (config.enable_client_credentials && grantType === 'client_credentials') ||
          (config.enable_password_grant && grantType === 'password')
        )
      ) {
        refuse(oauthError('unsupported_grant_type', 'Invalid grant_type'));
      }
      const client = clientCredentials(params, request, config);
      const credential = credentialByClientId(client.id);
      if (!credential) {
        refuse(oauthError('invalid_client', 'Invalid client authentication'));
        basicRefused = client.fromHeader;
      } else {
        const redirectUri = params.redirect_uri ?? credential.redirect_uri[0];
        if (!credential.redirect_uri.includes(redirectUri!)) refuse(oauthError('invalid_request', 'Invalid redirect_uri that does not match with any redirect_uri created with the application'));
        if (credential.client_secret !== client.secret) {
          refuse(oauthError('invalid_client', 'Invalid client authentication'));
          basicRefused = client.fromHeader;
        }
      }

      if (!('error' in answer) && credential) {
        if (grantType === 'authorization_code') {
          const code = params.code;
          const index = state().codes.findIndex((candidate) => candidate.code === code && candidate.api_id === apiId && candidate.expiresAt > now());
          const issued = index >= 0 ? state().codes[index] : undefined;
          if (!issued || issued.credential_id !== credential.id) refuse(oauthError('invalid_request', 'Invalid code'));
          else {
            answer = issueToken(config, apiId, credential, issued.authenticated_userid, issued.scope, true);
            // Deleted so that it cannot be used again.
            state().codes.splice(index, 1);
          }
        } else if (grantType === 'client_credentials') {
          if (params.authenticated_userid !== undefined && config.provision_key !== params.provision_key) refuse(oauthError('invalid_provision_key', 'Invalid provision_key'));
          else {
            const scopes = scopesOf(params, config);
            if ('error' in scopes) refuse(scopes);
            else answer = issueToken(config, apiId, credential, params.authenticated_userid, scopes.scopes.join(' '), false);
          }
        } else if (grantType === 'password') {
          if (config.provision_key !== params.provision_key) refuse(oauthError('invalid_provision_key', 'Invalid provision_key'));
          else if (!params.authenticated_userid?.trim()) refuse(oauthError('invalid_authenticated_userid', 'Missing authenticated_userid parameter'));
          else {
            const scopes = scopesOf(params, config);
            if ('error' in scopes) refuse(scopes);
            else answer = issueToken(config, apiId, credential, params.authenticated_userid, scopes.scopes.join(' '), true);
          }
        } else if (grantType === 'refresh_token') {
          const index = state().tokens.findIndex((candidate) => candidate.refresh_token !== null && candidate.refresh_token === params.refresh_token && candidate.api_id === apiId);
          const old = index >= 0 ? state().tokens[index] : undefined;
          if (!old) refuse(oauthError('invalid_request', 'Invalid refresh_token'));
          else if (old.credential_id !== credential.id) refuse(oauthError('invalid_client', 'Invalid client authentication'));
          else {
            answer = issueToken(config, apiId, credential, old.authenticated_userid, old.scope, true);
            // Rotation: the old access token and its refresh token are gone.
            state().tokens.splice(state().tokens.indexOf(old), 1);
          }
        }
      }
    }
    if (params.state !== undefined) answer.state = params.state;
    const failed = 'error' in answer;
    const status = failed ? (basicRefused && answer.error === 'invalid_client' ? 401 : 400) : 200;
    return {
      status,
      body: answer,
      headers: { ...NO_STORE, ...CORS, ...(status === 401 ? { 'www-authenticate': 'Basic realm="OAuth2.0"' } : {}) },
    };
  }

  async function authorize(request: RouteRequest): Promise<Reply> {
    const found = context(request, '/oauth2/authorize');
    if ('status' in found) return found;
    const { plugin, apiId } = found;
    const config = plugin.config;
    const params = await parameters(request);
    let answer: Record<string, string | number | undefined> = {};
    let redirectUri: string | undefined;
    let implicit = false;

    const https = httpsProblem(request, config);
    if (https) answer = { ...https };
    else if (config.provision_key !== params.provision_key) answer = oauthError('invalid_provision_key', 'Invalid provision_key');
    else if (!params.authenticated_userid?.trim()) answer = oauthError('invalid_authenticated_userid', 'Missing authenticated_userid parameter');
    else {
      const responseType = params.response_type;
      if (!((responseType === 'code' && config.enable_authorization_code) || (responseType === 'token' && config.enable_implicit_grant))) {
        answer = oauthError('unsupported_response_type', 'Invalid response_type');
      }
      const scopes = scopesOf(params, config);
      if ('error' in scopes) answer = scopes;
      const credential = credentialByClientId(params.client_id);
      if (!credential) answer = oauthError('invalid_client', 'Invalid client authentication');
      else {
        redirectUri = params.redirect_uri ?? credential.redirect_uri[0];
        if (!credential.redirect_uri.includes(redirectUri!)) {
          answer = oauthError('invalid_request', 'Invalid redirect_uri that does not match with any redirect_uri created with the application');
          // The real plugin then redirects to the first registered URI.
          redirectUri = credential.redirect_uri[0];
        }
      }
      if (!('error' in answer) && credential && !('error' in scopes)) {
        if (responseType === 'code') {
          const code = randomSecret();
          state().codes.push({ code, api_id: apiId, credential_id: credential.id, authenticated_userid: params.authenticated_userid, scope: scopes.scopes.join(' '), expiresAt: now() + AUTHORIZATION_CODE_TTL_MS });
          answer = { code };
        } else {
          answer = issueToken(config, apiId, credential, params.authenticated_userid, scopes.scopes.join(' '), false);
          implicit = true;
        }
      }
    }
    if (params.state !== undefined) answer.state = params.state;
    const status = 'error' in answer ? 400 : 200;
    const values = Object.fromEntries(Object.entries(answer).map(([name, value]) => [name, value === undefined ? undefined : String(value)]));
    return { status, body: redirectUri ? { redirect_uri: withQuery(redirectUri, values, implicit) } : answer, headers: { ...NO_STORE, ...CORS } };
  }

  const preflight = (): Reply => ({ status: 204, headers: CORS });
  const prefixes = Array.from({ length: MAX_PREFIX_SEGMENTS + 1 }, (_, depth) => Array.from({ length: depth }, (_unused, index) => `/:p${index}`).join(''));
  const routes = prefixes.flatMap((prefix): Route[] => [
    { method: 'POST', path: `${prefix}/oauth2/token`, handler: token },
    { method: 'OPTIONS', path: `${prefix}/oauth2/token`, handler: preflight },
    { method: 'POST', path: `${prefix}/oauth2/authorize`, handler: authorize },
    { method: 'OPTIONS', path: `${prefix}/oauth2/authorize`, handler: preflight },
  ]);

  function introspect(value: string): Record<string, unknown> {
    const issued = state().tokens.find((candidate) => candidate.access_token === value);
    const expiresAt = issued ? issued.issuedAt + issued.expires_in * 1000 : 0;
    if (!issued || (issued.expires_in > 0 && expiresAt <= now())) return { active: false };
    const credential = state().credentials.find((candidate) => candidate.id === issued.credential_id);
    const api = state().apis.find((candidate) => candidate.id === issued.api_id);
    return {
      active: true,
      scope: issued.scope,
      client_id: credential?.client_id,
      token_type: 'bearer',
      iat: Math.floor(issued.issuedAt / 1000),
      ...(issued.expires_in > 0 ? { exp: Math.floor(expiresAt / 1000) } : {}),
      ...(issued.authenticated_userid !== null ? { sub: issued.authenticated_userid, username: issued.authenticated_userid } : {}),
      ...(api ? { aud: api.name } : {}),
    };
  }

  return { routes, introspect };
}
