import { z } from 'zod';
import { upstreamContractError } from '../kit/errors.ts';
import { restPath } from '../kit/paths.ts';
import { listOf } from '../kit/shapes.ts';
import type { RestCall, RestResponse, RestTransport } from '../kit/transport.ts';

/**
 * Every endpoint of the gateway's admin interface (Kong 0.x admin API), called from here and
 * nowhere else. The interface has no authentication of its own: whoever may call this client
 * administers the gateway, so only an authorised context builds one (see `authorization.ts`).
 */

const SERVICE = 'gatewayAdmin';

export const OAuthGrant = {
  CLIENT_CREDENTIALS: 'client_credentials',
  AUTHORIZATION_CODE: 'authorization_code',
  IMPLICIT: 'implicit',
  PASSWORD: 'password',
} as const;
export type OAuthGrant = (typeof OAuthGrant)[keyof typeof OAuthGrant];

/** The plugin's switch of each grant, in the order the guide lists them. */
const GRANT_SWITCHES: readonly [OAuthGrant, string][] = [
  [OAuthGrant.CLIENT_CREDENTIALS, 'enable_client_credentials'],
  [OAuthGrant.AUTHORIZATION_CODE, 'enable_authorization_code'],
  [OAuthGrant.IMPLICIT, 'enable_implicit_grant'],
  [OAuthGrant.PASSWORD, 'enable_password_grant'],
];

export interface ApiDto {
  id: string;
  name: string;
  uris: string[];
  upstreamUrl: string;
  createdAt: string | null;
}

export interface ConsumerDto {
  id: string;
  username: string | null;
  createdAt: string | null;
}

/** An application without its secret: nothing that outlives the creating call carries it. */
export interface ApplicationDto {
  id: string;
  name: string;
  clientId: string;
  redirectUris: string[];
  consumerId: string;
  createdAt: string | null;
}

export interface CreatedApplicationDto {
  application: ApplicationDto;
  clientSecret: string;
}

export interface PluginDto {
  id: string;
  apiId: string | null;
  enabled: boolean;
  grants: OAuthGrant[];
  scopes: string[];
  mandatoryScope: boolean;
  tokenExpiration: number;
  acceptHttpIfAlreadyTerminated: boolean;
  createdAt: string | null;
}

export interface EnabledPluginDto {
  plugin: PluginDto;
  provisionKey: string | null;
}

export interface EnableOAuth2Request {
  scopes: readonly string[];
  mandatoryScope: boolean;
  grant: OAuthGrant;
  acceptHttpIfAlreadyTerminated: boolean;
}

/**
 * Grants whose requests carry the plugin's provision key: the API's own login page sends it to the
 * authorize endpoint (authorization code, implicit) or the token endpoint (password).
 */
const PROVISIONED_GRANTS: readonly OAuthGrant[] = [OAuthGrant.AUTHORIZATION_CODE, OAuthGrant.IMPLICIT, OAuthGrant.PASSWORD];

/* The admin interface's answers, checked at the boundary: a 2xx of another shape is UPSTREAM_ERROR. */

/** 0.x sends booleans as JSON booleans; a form-minded proxy may hand back their text. */
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);
/** 0.x counts milliseconds since the epoch, later releases seconds. */
const timestamp = z.union([z.number(), z.string()]).nullish();
/**
 * An empty list as 0.x sends it: it keeps lists as JSON text and decodes them with no array
 * metatable, so `[]` comes back as `{}` (kong/dao/db/postgres.lua `deserialize_rows`; Kong #2773).
 */
const emptyList = z.strictObject({}).transform((): never[] => []);
/** A list the interface sends as an array, `{}` when empty, or (a comma-separated form value echoed back) as text. */
const list = z
  .union([listOf(z.string()), emptyList, z.string().transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean)).pipe(listOf(z.string()))])
  .nullish();

const ApiSchema = z.object({ id: z.string(), name: z.string(), uris: list, upstream_url: z.string(), created_at: timestamp });
const ConsumerSchema = z.object({ id: z.string(), username: z.string().nullish(), created_at: timestamp });
const CredentialSchema = z.object({
  id: z.string(),
  name: z.string(),
  client_id: z.string(),
  client_secret: z.string().optional(),
  redirect_uri: z.union([listOf(z.string()), emptyList, z.string().transform((value) => [value])]),
  consumer_id: z.string().optional(),
  consumer: z.object({ id: z.string() }).optional(),
  created_at: timestamp,
}).refine((credential) => credential.consumer_id !== undefined || credential.consumer !== undefined, { message: 'names no consumer', path: ['consumer_id'] });
const PluginSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Where it runs: one API, or (0.13's Routes and Services) one route or one service; none of them, every API. */
  api_id: z.string().nullish(),
  route_id: z.string().nullish(),
  service_id: z.string().nullish(),
  enabled: flag.optional(),
  config: z.object({
    scopes: list,
    mandatory_scope: flag.optional(),
    provision_key: z.string().nullish(),
    token_expiration: z.coerce.number().optional(),
    enable_client_credentials: flag.optional(),
    enable_authorization_code: flag.optional(),
    enable_implicit_grant: flag.optional(),
    enable_password_grant: flag.optional(),
    accept_http_if_already_terminated: flag.optional(),
  }),
  created_at: timestamp,
});
/** Rows of one page: this client asks for no `size`, so Kong sends 100; later releases accept at most 1000. */
const MAX_PAGE_SIZE = 1000;
/** Longer than any offset a Kong DAO makes (a page number, or a Cassandra paging state, in base64). */
const MAX_OFFSET = 1024;
/**
 * One page of a list (kong/api/crud_helpers.lua `paginated_set`): `offset` is there while pages
 * remain; `next` repeats it as a URL that drops the caller's filters, so it is not followed.
 */
const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.union([listOf(item, MAX_PAGE_SIZE), emptyList]), offset: z.string().max(MAX_OFFSET).nullish() });

/**
 * Pages one list may take. Kong pages by 100, so this reads 2,000 rows; a longer list is refused
 * rather than read in part, where a missing row would turn into a wrong answer ("not secured").
 */
export const MAX_LIST_PAGES = 20;

function instant(value: number | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const number = typeof value === 'number' ? value : Number(value);
  const date = Number.isFinite(number) ? new Date(number < 1e11 ? number * 1000 : number) : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function parsed<T extends z.ZodType>(schema: T, response: RestResponse, what: string): z.output<T> {
  const result = schema.safeParse(response.body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw upstreamContractError(SERVICE, `the answer is not ${what} (${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unexpected shape'})`, response.status);
}

const toApi = (raw: z.output<typeof ApiSchema>): ApiDto => ({ id: raw.id, name: raw.name, uris: raw.uris ?? [], upstreamUrl: raw.upstream_url, createdAt: instant(raw.created_at) });
const toConsumer = (raw: z.output<typeof ConsumerSchema>): ConsumerDto => ({ id: raw.id, username: raw.username ?? null, createdAt: instant(raw.created_at) });
const toApplication = (raw: z.output<typeof CredentialSchema>): ApplicationDto => ({
  id: raw.id,
  name: raw.name,
  clientId: raw.client_id,
  redirectUris: raw.redirect_uri,
  // One of the two is there: the schema refuses an application that names no consumer.
  consumerId: raw.consumer_id ?? raw.consumer!.id,
  createdAt: instant(raw.created_at),
});
function toPlugin(raw: z.output<typeof PluginSchema>): PluginDto {
  const config = raw.config as Record<string, unknown>;
  return {
    id: raw.id,
    apiId: raw.api_id ?? null,
    enabled: raw.enabled ?? true,
    grants: GRANT_SWITCHES.filter(([, name]) => config[name] === true).map(([grant]) => grant),
    scopes: raw.config.scopes ?? [],
    mandatoryScope: raw.config.mandatory_scope ?? false,
    tokenExpiration: raw.config.token_expiration ?? 7200,
    acceptHttpIfAlreadyTerminated: raw.config.accept_http_if_already_terminated ?? false,
    createdAt: instant(raw.created_at),
  };
}

/**
 * The admin interface's error bodies, as the error table reads them. 0.x words a refusal as a flat
 * `{field: message}` (or `{message}` about the whole entity); later releases as
 * `{code, name, message, fields: {field: message}}`, where `code` is its own numbering, not HTTP's.
 */
export function readAdminError(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  const named = record.fields && typeof record.fields === 'object' && !Array.isArray(record.fields) ? (record.fields as Record<string, unknown>) : undefined;
  // Several errors on one field arrive as a list of messages.
  const isMessage = (value: unknown) => typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
  const flat = named ? undefined : Object.fromEntries(Object.entries(record).filter(([name, value]) => name !== 'message' && isMessage(value)));
  const entries = Object.entries(named ?? flat ?? {}).filter(([name]) => !name.startsWith('@'));
  const fields = entries.map(([name, value]) => ({ name, errors: (Array.isArray(value) ? value : [value]).map(String) }));
  const message = typeof record.message === 'string' ? record.message : fields.map(({ name, errors }) => `${name}: ${errors.join(', ')}`).join('; ') || undefined;
  return { ...(message ? { message } : {}), ...(fields.length ? { fields } : {}) };
}

export interface GatewayAdminClient {
  registerApi(input: { name: string; uris: readonly string[]; upstreamUrl: string }): Promise<ApiDto>;
  createConsumer(input: { username: string }): Promise<ConsumerDto>;
  createApplication(consumer: string, input: { name: string; redirectUri: string }): Promise<CreatedApplicationDto>;
  enableOAuth2(api: string, input: EnableOAuth2Request): Promise<EnabledPluginDto>;
  /** Null when the gateway has no such API. */
  getApi(nameOrId: string): Promise<ApiDto | null>;
  /** The OAuth 2.0 plugins on one API; null when the API does not exist. */
  apiOAuth2Plugins(nameOrId: string): Promise<PluginDto[] | null>;
  /** The OAuth 2.0 plugins that secure every API: on no API, route or service. */
  globalOAuth2Plugins(): Promise<PluginDto[]>;
  /** A consumer's applications, secrets left out; null when the consumer does not exist. */
  applications(consumer: string): Promise<ApplicationDto[] | null>;
}

const formFlag = (value: boolean) => (value ? 'true' : 'false');

export function createGatewayAdminClient({ transport }: { transport: RestTransport }): GatewayAdminClient {
  const call = (method: RestCall['method'], operation: string, path: string, extra: Pick<RestCall, 'query' | 'body'> = {}): RestCall => ({
    operation,
    method,
    path,
    ...extra,
    errorBody: readAdminError,
  });

  /**
   * Every row of a paged list: its first page, then the page of each `offset` with the filters
   * sent again, each page one call of the request's budget. Null when the first page is a 404 of
   * a lookup (the API or consumer does not exist). An offset seen before, or more than
   * `MAX_LIST_PAGES` pages, is UPSTREAM_ERROR: the list cannot be read whole.
   */
  async function everyRow<T extends z.ZodType, R extends RestResponse | null>(
    read: (call: RestCall) => Promise<R>,
    operation: string,
    path: string,
    filters: Record<string, string>,
    item: T,
    what: string,
  ): Promise<z.output<T>[] | Extract<R, null>> {
    const rows: z.output<T>[] = [];
    const seen = new Set<string>();
    let offset: string | undefined;
    for (let pages = 1; ; pages += 1) {
      const response = await read(call('GET', operation, path, { query: offset === undefined ? filters : { ...filters, offset } }));
      if (response === null) return null as Extract<R, null>;
      const page = parsed(pageOf(item), response, `a list of ${what}`);
      rows.push(...page.data);
      if (!page.offset) return rows;
      if (seen.has(page.offset)) throw upstreamContractError(SERVICE, `the list of ${what} could not be read whole: a page gave the offset of an earlier one again`, response.status);
      if (pages >= MAX_LIST_PAGES) throw upstreamContractError(SERVICE, `the list of ${what} could not be read whole: it runs past ${MAX_LIST_PAGES} pages`, response.status);
      seen.add(page.offset);
      offset = page.offset;
    }
  }
  const request = (one: RestCall) => transport.request(one);
  const lookup = (one: RestCall) => transport.lookup(one);

  return {
    async registerApi({ name, uris, upstreamUrl }) {
      const response = await transport.request(call('POST', 'registerApi', '/apis', { body: { form: { name, uris: uris.join(','), upstream_url: upstreamUrl } } }));
      return toApi(parsed(ApiSchema, response, 'an API'));
    },

    async createConsumer({ username }) {
      const response = await transport.request(call('POST', 'createConsumer', '/consumers', { body: { form: { username } } }));
      return toConsumer(parsed(ConsumerSchema, response, 'a consumer'));
    },

    async createApplication(consumer, { name, redirectUri }) {
      const response = await transport.request(call('POST', 'createApplication', restPath('/consumers/:consumer/oauth2/', { consumer }), { body: { form: { name, redirect_uri: redirectUri } } }));
      const credential = parsed(CredentialSchema, response, 'an OAuth 2.0 application');
      if (!credential.client_secret) throw upstreamContractError(SERVICE, 'the new application came without its client_secret', response.status);
      return { application: toApplication(credential), clientSecret: credential.client_secret };
    },

    async enableOAuth2(api, { scopes, mandatoryScope, grant, acceptHttpIfAlreadyTerminated }) {
      const form: Record<string, string> = {
        name: 'oauth2',
        'config.mandatory_scope': formFlag(mandatoryScope),
        'config.accept_http_if_already_terminated': formFlag(acceptHttpIfAlreadyTerminated),
      };
      if (scopes.length) form['config.scopes'] = scopes.join(',');
      for (const [candidate, name] of GRANT_SWITCHES) if (candidate === grant) form[`config.${name}`] = 'true';
      const response = await transport.request(call('POST', 'enableOAuth2', restPath('/apis/:api/plugins/', { api }), { body: { form } }));
      const raw = parsed(PluginSchema, response, 'a plugin');
      const plugin = toPlugin(raw);
      // The gateway generates a key for every plugin; it is shown only where a grant needs it.
      const provisionKey = plugin.grants.some((candidate) => PROVISIONED_GRANTS.includes(candidate)) ? (raw.config.provision_key ?? null) : null;
      return { plugin, provisionKey };
    },

    async getApi(nameOrId) {
      const response = await transport.lookup(call('GET', 'getApi', restPath('/apis/:api', { api: nameOrId })));
      return response ? toApi(parsed(ApiSchema, response, 'an API')) : null;
    },

    async apiOAuth2Plugins(nameOrId) {
      const plugins = await everyRow(lookup, 'listApiPlugins', restPath('/apis/:api/plugins/', { api: nameOrId }), { name: 'oauth2' }, PluginSchema, 'plugins');
      return plugins ? plugins.filter((plugin) => plugin.name === 'oauth2').map(toPlugin) : null;
    },

    async globalOAuth2Plugins() {
      // The list holds the plugins of routes and services too (their api_id is null): only one on none of the three runs for every API.
      const plugins = await everyRow(request, 'listPlugins', '/plugins', { name: 'oauth2' }, PluginSchema, 'plugins');
      return plugins.filter((plugin) => plugin.name === 'oauth2' && !plugin.api_id && !plugin.route_id && !plugin.service_id).map(toPlugin);
    },

    async applications(consumer) {
      const applications = await everyRow(lookup, 'listApplications', restPath('/consumers/:consumer/oauth2/', { consumer }), {}, CredentialSchema, 'OAuth 2.0 applications');
      return applications ? applications.map(toApplication) : null;
    },
  };
}
