import type { Reply, Route, RouteRequest } from '../kit/router.ts';
import type { EmulatedApi, EmulatedPlugin, GatewayAdminState } from './data.ts';
import { NO_API, apiFor, pluginFor } from './oauth2.ts';

/**
 * The gateway's proxy: a request on an API's URI goes to the API's upstream. Where the OAuth 2.0
 * plugin runs, it needs a valid access token first, and the upstream learns the caller from the
 * headers the real plugin sets (kong/plugins/oauth2/access.lua, `do_authentication`, `set_consumer`):
 * `X-Consumer-ID`, `X-Consumer-Custom-ID`, `X-Consumer-Username`, `X-Authenticated-Scope`,
 * `X-Authenticated-Userid`.
 */

/** How long the proxy waits for an upstream (the real gateway's default read timeout is 60 s). */
const UPSTREAM_TIMEOUT_MS = 60_000;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'host']);
const CALLER_HEADERS = ['x-consumer-id', 'x-consumer-custom-id', 'x-consumer-username', 'x-authenticated-scope', 'x-authenticated-userid', 'x-anonymous-consumer'];
const INVALID_TOKEN = 'The access token is invalid or has expired';

function unauthorized(error: string, description: string, challenge: string): Reply {
  return { status: 401, body: { error, error_description: description }, headers: { 'www-authenticate': challenge } };
}
const invalidToken = () => unauthorized('invalid_token', INVALID_TOKEN, `Bearer realm="service" error="invalid_token" error_description="${INVALID_TOKEN}"`);

/** `parse_access_token`: the `access_token` parameter (query or form body), else `Authorization: Bearer|Token <token>`. */
function accessToken(request: RouteRequest, headerName: string): { value: string; fromHeader: boolean } | undefined {
  const fromQuery = request.query.get('access_token');
  if (fromQuery) return { value: fromQuery, fromHeader: false };
  if (String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    const fromBody = new URLSearchParams(request.body.toString('utf8')).get('access_token');
    if (fromBody) return { value: fromBody, fromHeader: false };
  }
  const header = request.headers[headerName.toLowerCase()];
  const parts = typeof header === 'string' ? header.trim().split(/\s+/) : [];
  return parts.length === 2 && /^(bearer|token)$/i.test(parts[0]!) ? { value: parts[1]!, fromHeader: true } : undefined;
}

/** The caller's headers for the upstream, or the refusal. */
function authenticate(state: GatewayAdminState, now: number, request: RouteRequest, api: EmulatedApi, plugin: EmulatedPlugin): { headers: Record<string, string>; hideHeader: boolean; hideParam: boolean } | Reply {
  const found = accessToken(request, plugin.config.auth_header_name);
  if (!found) return unauthorized('invalid_request', 'The access token is missing', 'Bearer realm="service"');
  const token = state.tokens.find((candidate) => candidate.access_token === found.value);
  if (!token) return invalidToken();
  // A token is the API's own, unless the plugin shares credentials across APIs.
  if ((token.api_id !== null && token.api_id !== api.id) || (token.api_id === null && !plugin.config.global_credentials)) return invalidToken();
  if (token.expires_in > 0 && now - token.issuedAt > token.expires_in * 1000) return invalidToken();
  const credential = state.credentials.find((candidate) => candidate.id === token.credential_id);
  const consumer = credential && state.consumers.find((candidate) => candidate.id === credential.consumer_id);
  if (!consumer) return invalidToken();
  const headers: Record<string, string> = { 'x-consumer-id': consumer.id, 'x-authenticated-scope': token.scope };
  if (consumer.custom_id) headers['x-consumer-custom-id'] = consumer.custom_id;
  if (consumer.username) headers['x-consumer-username'] = consumer.username;
  if (token.authenticated_userid) headers['x-authenticated-userid'] = token.authenticated_userid;
  return { headers, hideHeader: plugin.config.hide_credentials && found.fromHeader, hideParam: plugin.config.hide_credentials && !found.fromHeader };
}

export function proxyRoutes(state: () => GatewayAdminState, now: () => number): Route[] {
  async function proxy(request: RouteRequest): Promise<Reply> {
    const matched = apiFor(state(), request.path);
    if (!matched) return NO_API;
    const { api, rest } = matched;
    const plugin = pluginFor(state(), api);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const query = new URLSearchParams(request.query);
    if (plugin) {
      const caller = authenticate(state(), now(), request, api, plugin);
      if ('status' in caller) return caller;
      // The plugin sets these itself: what a caller sent under those names never reaches the upstream.
      for (const name of CALLER_HEADERS) delete headers[name];
      Object.assign(headers, caller.headers);
      if (caller.hideHeader) delete headers[plugin.config.auth_header_name.toLowerCase()];
      if (caller.hideParam) query.delete('access_token');
    }
    const host = request.headers.host ?? '';
    if (api.preserve_host) headers.host = host;
    headers['x-forwarded-for'] = request.raw.socket.remoteAddress ?? '';
    headers['x-forwarded-proto'] = 'http';
    headers['x-forwarded-host'] = host;

    const upstream = new URL(api.upstream_url);
    const path = `${upstream.pathname.replace(/\/+$/, '')}${api.strip_uri ? rest : request.path}` || '/';
    const search = query.toString();
    const target = `${upstream.origin}${path.startsWith('/') ? path : `/${path}`}${search ? `?${search}` : ''}`;
    try {
      const response = await fetch(target, {
        method: request.method,
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
        ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body: request.body }),
      });
      const answered: Record<string, string> = {};
      // fetch has already decoded the body: its encoding and length no longer apply.
      response.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') answered[name] = value;
      });
      return { status: response.status, raw: Buffer.from(await response.arrayBuffer()), headers: answered };
    } catch (error) {
      return (error as Error).name === 'TimeoutError'
        ? { status: 504, body: { message: 'The upstream server is timing out' } }
        : { status: 502, body: { message: 'An invalid response was received from the upstream server' } };
    }
  }

  // After every admin and plugin route: a path they claim is theirs, as the real gateway's admin port is not its proxy port.
  return ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].map((method) => ({ method, path: '/*', handler: proxy }));
}
