import type { Reply, Route, RouteRequest } from '../kit/router.ts';
import { fieldsBody } from '../kit/bodies.ts';
import {
  REFRESH_TOKEN_TTL_SECONDS,
  TOKEN_EXPIRATION_SECONDS,
  randomSecret,
  type EmulatedApi,
  type EmulatedPlugin,
  type GatewayAdminState,
  type OAuth2Config,
} from './data.ts';

/**
 * The admin interface's routes (Kong 0.x, `{admin_url}`): the statuses and bodies of the real
 * admin API, in the dialect the control surface picked.
 */

type Problems = Record<string, string>;

/** A 400 naming fields, worded as the current dialect words it. */
export function schemaViolation(state: GatewayAdminState, fields: Problems): Reply {
  if (state.dialect === 'flat') return { status: 400, body: fields };
  const entries = Object.entries(fields).map(([name, message]) => `${name}: ${message}`);
  const message = entries.length === 1 ? `schema violation (${entries[0]})` : `${entries.length} schema violations (${entries.join('; ')})`;
  return { status: 400, body: { code: 2, name: 'schema violation', message, fields } };
}

/** A 400 about the whole entity rather than one field. */
function entityViolation(state: GatewayAdminState, message: string): Reply {
  return state.dialect === 'flat' ? { status: 400, body: { message } } : { status: 400, body: { code: 2, name: 'schema violation', message, fields: { '@entity': [message] } } };
}

function uniqueViolation(state: GatewayAdminState, field: string, value: string): Reply {
  return state.dialect === 'flat'
    ? { status: 409, body: { [field]: `already exists with value '${value}'` } }
    : { status: 409, body: { code: 5, name: 'unique constraint violation', message: `UNIQUE violation detected on '{${field}="${value}"}'`, fields: { [field]: value } } };
}

export const notFound = (): Reply => ({ status: 404, body: { message: 'Not found' } });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The real API's `check_name`: unreserved URL characters only. */
const API_NAME = /^[A-Za-z0-9._~-]+$/;

/** A list sent as `a,b`, as repeated fields, or as a JSON array. */
function listField(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value.map(String) : String(value).split(',');
  return items.map((item) => item.trim()).filter(Boolean);
}

/** A boolean as the admin API reads form fields: `true`/`false`, or a JSON boolean. */
function booleanField(value: unknown, name: string, problems: Problems, fallback: boolean): boolean {
  if (value === undefined || value === null || value === '') return fallback;
  const word = typeof value === 'string' ? value.trim().toLowerCase() : value;
  if (word === true || word === 'true') return true;
  if (word === false || word === 'false') return false;
  problems[name] = `${name.replace(/^config\./, '')} is not a boolean`;
  return fallback;
}

function numberField(value: unknown, name: string, problems: Problems, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) problems[name] = `${name.replace(/^config\./, '')} is not a number`;
  return Number.isFinite(parsed) ? parsed : fallback;
}

/** An absolute URL with a scheme and a host and no fragment, as the real plugin checks redirect URIs. */
function uriProblem(uri: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return `cannot parse '${uri}'`;
  }
  if (!parsed.host) return `cannot parse '${uri}'`;
  if (parsed.hash) return `fragment not allowed in '${uri}'`;
  return undefined;
}

function upstreamUrlProblem(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'Supported protocols are HTTP and HTTPS';
  } catch {
    return 'Invalid URL';
  }
}

const fields = async (request: RouteRequest): Promise<Record<string, unknown>> => (await fieldsBody(request)) ?? {};
const text = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value));

/**
 * 0.x keeps a list as JSON text and decodes it without an array metatable, so an empty one goes
 * out as `{}` (kong/dao/db/postgres.lua, `deserialize_rows`; Kong issue #2773).
 */
const kongList = (list: readonly string[] | null | undefined) => (list && list.length === 0 ? {} : list);
const kongApi = (api: EmulatedApi) => ({ ...api, hosts: kongList(api.hosts), uris: kongList(api.uris), methods: kongList(api.methods) });
const kongPlugin = (plugin: EmulatedPlugin) => ({ ...plugin, config: { ...plugin.config, scopes: kongList(plugin.config.scopes) } });

/** A list's filters, by query parameter: `true` for an id, which must be a UUID. */
type Filters = Record<string, boolean>;
const API_FILTERS: Filters = { id: true, name: false, upstream_url: false };
const PLUGIN_FILTERS: Filters = { id: true, name: false, api_id: true, route_id: true, service_id: true, consumer_id: true };
const CREDENTIAL_FILTERS: Filters = { id: true, name: false, client_id: false, consumer_id: true };

/** Kong's default page; the emulator's largest (0.13.1 reads any `size`, later releases allow 1 to 1000). */
const PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

/**
 * Kong 0.x `crud.paginated_set` (kong/api/crud_helpers.lua) over the Postgres DAO: every query
 * parameter but `offset` and `size` is a filter, an unknown one a 400; pages of `size` (100 by
 * default); `offset` the next page's number in base64, and `next` a URL that carries only
 * `offset` and `size`, so a caller sends its filters again. `{data, total, offset, next}`, the last
 * two absent on the last page.
 */
function pagedSet<T>(state: GatewayAdminState, request: RouteRequest, rows: readonly T[], filters: Filters, render: (row: T) => unknown = (row) => row): Reply {
  const problems: Problems = {};
  const wanted: [string, string][] = [];
  for (const [name, value] of request.query) {
    if (name === 'offset' || name === 'size') continue;
    if (!(name in filters)) problems[name] = 'unknown field';
    else if (filters[name] && !UUID.test(value)) problems[name] = `${value} is not a valid uuid`;
    else wanted.push([name, value]);
  }
  const sizeText = request.query.get('size');
  const size = sizeText === null ? PAGE_SIZE : /^[0-9]{1,4}$/.test(sizeText) ? Number(sizeText) : 0;
  if (size < 1 || size > MAX_PAGE_SIZE) problems.size = `size must be an integer from 1 to ${MAX_PAGE_SIZE}`;
  const offsetText = request.query.get('offset');
  const pageText = offsetText === null ? '1' : Buffer.from(offsetText, 'base64').toString('utf8');
  if (!/^[1-9][0-9]{0,8}$/.test(pageText)) problems.offset = 'offset is not one this list gave';
  if (Object.keys(problems).length) return schemaViolation(state, problems);
  const matching = rows.filter((row) => wanted.every(([name, value]) => (row as Record<string, unknown>)[name] === value));
  const page = Number(pageText);
  const data = matching.slice((page - 1) * size, page * size).map(render);
  if (page * size >= matching.length) return { status: 200, body: { data, total: matching.length } };
  const offset = Buffer.from(String(page + 1)).toString('base64');
  const next = `http://${request.headers.host ?? '127.0.0.1'}${request.path}?offset=${encodeURIComponent(offset)}&size=${size}`;
  return { status: 200, body: { data, total: matching.length, offset, next } };
}

export function adminRoutes(state: () => GatewayAdminState, now: () => number): Route[] {
  /** By id, or by the alternate field (name, username) when the value is not a UUID or no id matches. */
  const findApi = (ref: string) => state().apis.find((api) => api.id === ref) ?? state().apis.find((api) => api.name === ref);
  const findConsumer = (ref: string) => state().consumers.find((consumer) => consumer.id === ref) ?? state().consumers.find((consumer) => consumer.username === ref);

  async function createApi(request: RouteRequest): Promise<Reply> {
    const body = await fields(request);
    const problems: Problems = {};
    const name = text(body.name);
    const uris = listField(body.uris);
    const hosts = listField(body.hosts);
    const methods = listField(body.methods);
    const upstreamUrl = text(body.upstream_url);
    if (name === undefined || name === '') problems.name = 'name is required';
    else if (!API_NAME.test(name)) problems.name = "name must only contain alphanumeric and '., -, _, ~' characters";
    if (upstreamUrl === undefined || upstreamUrl === '') problems.upstream_url = 'upstream_url is required';
    else {
      const problem = upstreamUrlProblem(upstreamUrl);
      if (problem) problems.upstream_url = problem;
    }
    for (const uri of uris ?? []) {
      const problem = !uri.startsWith('/') ? 'must be prefixed with slash' : /\/\/+/.test(uri) ? 'invalid' : undefined;
      if (problem) {
        problems.uris = `uri with value '${uri}' is invalid: ${problem}`;
        break;
      }
    }
    const strip = booleanField(body.strip_uri, 'strip_uri', problems, true);
    const preserveHost = booleanField(body.preserve_host, 'preserve_host', problems, false);
    const httpsOnly = booleanField(body.https_only, 'https_only', problems, false);
    const httpIfTerminated = booleanField(body.http_if_terminated, 'http_if_terminated', problems, false);
    if (Object.keys(problems).length) return schemaViolation(state(), problems);
    if (!uris?.length && !hosts?.length && !methods?.length) return entityViolation(state(), "at least one of 'hosts', 'uris' or 'methods' must be specified");
    if (state().apis.some((api) => api.name === name)) return uniqueViolation(state(), 'name', name!);
    const api: EmulatedApi = {
      id: state().nextId(),
      name: name!,
      ...(hosts ? { hosts } : {}),
      // The real API keeps a URI without its trailing slash.
      ...(uris ? { uris: uris.map((uri) => (uri !== '/' && uri.endsWith('/') ? uri.slice(0, -1) : uri)) } : {}),
      ...(methods ? { methods } : {}),
      upstream_url: upstreamUrl!,
      strip_uri: strip,
      preserve_host: preserveHost,
      https_only: httpsOnly,
      http_if_terminated: httpIfTerminated,
      created_at: now(),
    };
    state().apis.push(api);
    return { status: 201, body: kongApi(api) };
  }

  async function createConsumer(request: RouteRequest): Promise<Reply> {
    const body = await fields(request);
    const username = text(body.username)?.trim() || undefined;
    const customId = text(body.custom_id)?.trim() || undefined;
    if (!username && !customId) return entityViolation(state(), "At least a 'custom_id' or a 'username' must be specified");
    if (username && state().consumers.some((consumer) => consumer.username === username)) return uniqueViolation(state(), 'username', username);
    if (customId && state().consumers.some((consumer) => consumer.custom_id === customId)) return uniqueViolation(state(), 'custom_id', customId);
    const consumer = { id: state().nextId(), username: username ?? null, custom_id: customId ?? null, created_at: now() };
    state().consumers.push(consumer);
    return { status: 201, body: consumer };
  }

  async function createCredential(request: RouteRequest): Promise<Reply> {
    const consumer = findConsumer(request.params.consumer!);
    if (!consumer) return notFound();
    const body = await fields(request);
    const problems: Problems = {};
    const name = text(body.name);
    const redirectUris = listField(body.redirect_uri);
    if (!name) problems.name = 'name is required';
    if (!redirectUris?.length) problems.redirect_uri = 'redirect_uri is required';
    else {
      const problem = redirectUris.map(uriProblem).find(Boolean);
      if (problem) problems.redirect_uri = problem;
    }
    if (Object.keys(problems).length) return schemaViolation(state(), problems);
    // The caller may choose its client id and secret; the real plugin generates them otherwise.
    const clientId = text(body.client_id) || randomSecret();
    if (state().credentials.some((credential) => credential.client_id === clientId)) return uniqueViolation(state(), 'client_id', clientId);
    const credential = {
      id: state().nextId(),
      consumer_id: consumer.id,
      name: name!,
      client_id: clientId,
      client_secret: text(body.client_secret) || randomSecret(),
      redirect_uri: redirectUris!,
      created_at: now(),
    };
    state().credentials.push(credential);
    return { status: 201, body: credential };
  }

  async function createPlugin(request: RouteRequest, api: EmulatedApi | undefined): Promise<Reply> {
    const body = await fields(request);
    const name = text(body.name);
    if (!name) return schemaViolation(state(), { name: 'name is required' });
    if (name !== 'oauth2') return schemaViolation(state(), { config: `Plugin "${name}" not found` });
    const problems: Problems = {};
    const value = (field: string) => body[`config.${field}`] ?? (body.config && typeof body.config === 'object' ? (body.config as Record<string, unknown>)[field] : undefined);
    const config: OAuth2Config = {
      scopes: listField(value('scopes')) ?? null,
      mandatory_scope: booleanField(value('mandatory_scope'), 'config.mandatory_scope', problems, false),
      provision_key: text(value('provision_key')) || randomSecret(),
      token_expiration: numberField(value('token_expiration'), 'config.token_expiration', problems, TOKEN_EXPIRATION_SECONDS),
      enable_authorization_code: booleanField(value('enable_authorization_code'), 'config.enable_authorization_code', problems, false),
      enable_implicit_grant: booleanField(value('enable_implicit_grant'), 'config.enable_implicit_grant', problems, false),
      enable_client_credentials: booleanField(value('enable_client_credentials'), 'config.enable_client_credentials', problems, false),
      enable_password_grant: booleanField(value('enable_password_grant'), 'config.enable_password_grant', problems, false),
      hide_credentials: booleanField(value('hide_credentials'), 'config.hide_credentials', problems, false),
      accept_http_if_already_terminated: booleanField(value('accept_http_if_already_terminated'), 'config.accept_http_if_already_terminated', problems, false),
      anonymous: text(value('anonymous')) ?? '',
      global_credentials: booleanField(value('global_credentials'), 'config.global_credentials', problems, false),
      auth_header_name: text(value('auth_header_name')) || 'authorization',
      refresh_token_ttl: numberField(value('refresh_token_ttl'), 'config.refresh_token_ttl', problems, REFRESH_TOKEN_TTL_SECONDS),
    };
    if (config.mandatory_scope && !config.scopes) problems['config.mandatory_scope'] = 'To set a mandatory scope you also need to create available scopes';
    if (config.anonymous !== '' && !UUID.test(config.anonymous)) problems['config.anonymous'] = 'the anonymous user must be empty or a valid uuid';
    // Where it runs (kong/dao/schemas/plugins.lua): the path's API, or the ids the body names.
    const place: Pick<EmulatedPlugin, 'api_id' | 'route_id' | 'service_id'> = {};
    for (const field of ['api_id', 'route_id', 'service_id'] as const) {
      const id = text(body[field])?.trim();
      if (!id) continue;
      if (UUID.test(id)) place[field] = id;
      else problems[field] = `${id} is not a valid uuid`;
    }
    if (api) place.api_id = api.id;
    if (Object.keys(problems).length) return schemaViolation(state(), problems);
    if (place.api_id && (place.route_id || place.service_id)) return entityViolation(state(), 'cannot configure plugin with api_id and one of route_id or service_id');
    if (!config.enable_authorization_code && !config.enable_implicit_grant && !config.enable_client_credentials && !config.enable_password_grant) {
      return schemaViolation(state(), { config: 'You need to enable at least one OAuth flow' });
    }
    // One plugin of a name per place (one API, route or service, or every API): the real admin API answers a second with 409.
    const samePlace = (plugin: EmulatedPlugin) => plugin.api_id === place.api_id && plugin.route_id === place.route_id && plugin.service_id === place.service_id;
    if (state().plugins.some((plugin) => plugin.name === name && samePlace(plugin))) return uniqueViolation(state(), 'name', name);
    if (state().plugins.some((plugin) => plugin.config.provision_key === config.provision_key)) return uniqueViolation(state(), 'config.provision_key', config.provision_key);
    // The database's foreign key; routes and services are not modelled, so any of their ids is taken.
    if (place.api_id && !state().apis.some((candidate) => candidate.id === place.api_id)) return schemaViolation(state(), { api_id: `does not exist with value '${place.api_id}'` });
    const plugin: EmulatedPlugin = { id: state().nextId(), name: 'oauth2', ...place, config, enabled: booleanField(body.enabled, 'enabled', {}, true), created_at: now() };
    state().plugins.push(plugin);
    return { status: 201, body: kongPlugin(plugin) };
  }

  const credentialsRoute = (path: string): Route[] => [
    { method: 'POST', path, handler: createCredential },
    {
      method: 'GET',
      path,
      handler: (request) => {
        const consumer = findConsumer(request.params.consumer!);
        return consumer ? pagedSet(state(), request, state().credentials.filter((credential) => credential.consumer_id === consumer.id), CREDENTIAL_FILTERS) : notFound();
      },
    },
  ];
  const apiPluginsRoute = (path: string): Route[] => [
    {
      method: 'POST',
      path,
      handler: (request) => {
        const api = findApi(request.params.api!);
        return api ? createPlugin(request, api) : notFound();
      },
    },
    {
      method: 'GET',
      path,
      handler: (request) => {
        const api = findApi(request.params.api!);
        return api ? pagedSet(state(), request, state().plugins.filter((plugin) => plugin.api_id === api.id), PLUGIN_FILTERS, kongPlugin) : notFound();
      },
    },
  ];

  return [
    { method: 'POST', path: '/apis', handler: createApi },
    { method: 'POST', path: '/apis/', handler: createApi },
    { method: 'GET', path: '/apis', handler: (request) => pagedSet(state(), request, state().apis, API_FILTERS, kongApi) },
    {
      method: 'GET',
      path: '/apis/:api',
      handler: (request) => {
        const api = findApi(request.params.api!);
        return api ? { status: 200, body: kongApi(api) } : notFound();
      },
    },
    { method: 'POST', path: '/consumers', handler: createConsumer },
    { method: 'POST', path: '/consumers/', handler: createConsumer },
    {
      method: 'GET',
      path: '/consumers/:consumer',
      handler: (request) => {
        const consumer = findConsumer(request.params.consumer!);
        return consumer ? { status: 200, body: consumer } : notFound();
      },
    },
    ...credentialsRoute('/consumers/:consumer/oauth2/'),
    ...credentialsRoute('/consumers/:consumer/oauth2'),
    ...apiPluginsRoute('/apis/:api/plugins/'),
    ...apiPluginsRoute('/apis/:api/plugins'),
    { method: 'POST', path: '/plugins', handler: (request) => createPlugin(request, undefined) },
    { method: 'POST', path: '/plugins/', handler: (request) => createPlugin(request, undefined) },
    { method: 'GET', path: '/plugins', handler: (request) => pagedSet(state(), request, state().plugins, PLUGIN_FILTERS, kongPlugin) },
  ];
}
