import { z } from 'zod';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { missingCredential, upstreamContractError } from '../kit/errors.ts';
import { asArray, asRecord, asText } from '../kit/envelopes.ts';
import { bool, capped, identifier, listOf, MAX_LIST_ITEMS, optNum, optText, parseAnswer, text } from '../kit/shapes.ts';
import type { NumberedPage } from '../kit/connections.ts';
import { restPath } from '../kit/paths.ts';
import type { QueryValue, RestCall, RestResponse, RestTransport } from '../kit/transport.ts';

/** The gateway header that carries a caller's dashboards service token. */
export const CREDENTIAL_HEADER = SERVICE_ENTRY.dashboards.credentialHeaders.token;
const SERVICE = SERVICE_ENTRY.dashboards.name;

/**
 * How the service pages every list: `pageSize` at most 100, 15 by default, and `page` an index
 * (the spec's words), so the first page is 0.
 */
export const PAGING = { defaultSize: 15, maxSize: 100, firstPage: 0 } as const;

export interface DashboardDto {
  id: string;
  name: string;
  slug: string;
}

export interface EnvironmentFilterDto {
  dimension: string;
  operator: string;
  value: string;
}

export interface EnvironmentDto {
  id: string;
  name: string;
  slug: string;
  isDefault: boolean;
  /** Absent from list items: the list shows only id, slug, name and default. */
  filters?: EnvironmentFilterDto[];
}

export interface WidgetDto {
  id: string;
  /** The dashboard id or slug the widget was read under: the service's widgets do not name their dashboard. */
  dashboardRef: string;
  title: string | null;
  reportId: string | null;
  reportSlug: string | null;
  environmentSlug: string | null;
  type: string | null;
  metric: string | null;
  interval: string | null;
  timeframe: string | null;
  size: number | null;
  rowCount: number | null;
  primaryColor: string | null;
  sort: string | null;
}

/** A field null or absent is not sent. */
export type WidgetInput = Partial<Omit<WidgetDto, 'id' | 'dashboardRef'>> & { title: string; type: string };

/** A field null or absent is not sent: the service keeps what it has. */
export interface EnvironmentInput {
  name?: string | null;
  default?: boolean | null;
  filters?: EnvironmentFilterDto[] | null;
}

export interface DimensionValuesDto {
  values: string[];
  totalCount: number | null;
  currentPage: number | null;
}

export interface DimensionDto {
  name: string;
  type: string | null;
}

export interface DimensionGroupDto {
  category: string;
  dimensions: DimensionDto[];
}

export interface StatsDto {
  avgReqPerSec: number | null;
  requestCount: number | null;
  quotaRemaining: number | null;
  quotaBase: number | null;
}

export interface PageRequest {
  page: number;
  pageSize: number;
}

/** The base64 JSON the service reads `filters` as. */
export function encodeFilters(filters: readonly EnvironmentFilterDto[]): string {
  return Buffer.from(JSON.stringify(filters.map(({ dimension, operator, value }) => ({ dimension, operator, value })))).toString('base64');
}

// The answers' declared shapes, built once (variants and their sources: docs/services/dashboards.md).

/** A count the schema types as Int: a fractional value would fail the whole widget, so it reads as null. */
const wholeNumber = optNum.transform((value) => (value !== null && Number.isInteger(value) ? value : null));

const dashboardShape = z.object({ id: identifier, name: text, slug: text });

const filterShape = z.object({ dimension: text, operator: text, value: text });

const environmentShape = z
  .object({ id: identifier, name: text, slug: text, default: bool, filters: listOf(filterShape).nullish() })
  .transform(({ default: isDefault, filters, ...environment }): EnvironmentDto => (filters ? { ...environment, isDefault, filters } : { ...environment, isDefault }));

const widgetShape = z.object({
  id: identifier,
  title: optText,
  reportId: optText,
  reportSlug: optText,
  environmentSlug: optText,
  type: optText,
  metric: optText,
  interval: optText,
  timeframe: optText,
  size: optNum,
  rowCount: wholeNumber,
  primaryColor: optText,
  sort: optText,
});

const statsShape = z
  .object({ avgReqPerSec: optNum, nbReq: optNum, rateLimitingRemaining: optNum, rateLimitingBase: optNum })
  // Each may be null, not all: an answer with none of them (`{}`, another body sent with 200) holds no stats.
  .refine((stats) => Object.values(stats).some((value) => value !== null), { message: 'none of avgReqPerSec, nbReq, rateLimitingRemaining and rateLimitingBase' })
  .transform(({ avgReqPerSec, nbReq, rateLimitingRemaining, rateLimitingBase }): StatsDto => ({ avgReqPerSec, requestCount: nbReq, quotaRemaining: rateLimitingRemaining, quotaBase: rateLimitingBase }));

/** A list: the envelope `{results, totalCount, currentPage}`, or a bare array; a page holds at most `PAGING.maxSize`. */
function listShape<T>(item: z.ZodType<T>, max: number = PAGING.maxSize): z.ZodType<{ results: T[]; totalCount: number | null; currentPage: number | null }> {
  return z.union([
    z.object({ results: listOf(item, max), totalCount: optNum, currentPage: optNum }),
    listOf(item, max).transform((results) => ({ results, totalCount: null, currentPage: null })),
  ]);
}

/**
 * One resource: `{results: [X]}` as the spec shows (the real service adds `totalCount` and
 * `currentPage`), `results` holding the object itself, or the object bare.
 */
function oneShape<T>(item: z.ZodType<T>): z.ZodType<T> {
  return z.union([
    z.object({ results: capped(z.tuple([item], z.unknown()), PAGING.maxSize) }).transform((body): T => body.results[0] as T),
    z.object({ results: item }).transform((body): T => body.results as T),
    // Bare only when it is not an envelope: `{results: [bad]}` read as the object itself would be
    // one of nulls (its `results` key stripped), hiding the bad value.
    z.custom<unknown>((body) => !(body !== null && typeof body === 'object' && 'results' in body), { message: 'an envelope whose results hold no valid item' }).pipe(item),
  ]);
}

/** A group of a list of groups, read by hand; a group that is no object holds no dimensions to read. */
const dimensionGroup = z.union([z.object({ dimensions: capped(z.unknown()).optional() }).loose(), z.custom((value) => typeof value !== 'object' || value === null || Array.isArray(value))]);

/** Every answer the client reads, by what it holds. */
export const ANSWERS = {
  dashboards: listShape(dashboardShape),
  dashboard: oneShape(dashboardShape),
  environments: listShape(environmentShape),
  environment: oneShape(environmentShape),
  widgets: listShape(widgetShape),
  widget: oneShape(widgetShape),
  // `size` has no documented maximum.
  values: listShape(text, MAX_LIST_ITEMS),
  // Grouped dimensions are "not shown" beyond an object of categories: `toDimensionGroups` reads its
  // variants, and only how many there are is checked here.
  grouped: z.union([
    z.object({ results: z.union([listOf(dimensionGroup), z.record(z.string(), capped(z.unknown()))]) }).transform((body) => body.results),
    listOf(dimensionGroup),
  ]),
  stats: oneShape(statsShape),
};

const read = <T>(schema: z.ZodType<T>, response: RestResponse, operation: string): T => parseAnswer(schema, response.body, { service: SERVICE, operation, status: response.status });

function pageOf<T>(schema: z.ZodType<{ results: T[]; totalCount: number | null }>, response: RestResponse, operation: string): NumberedPage<T> {
  const { results, totalCount } = read(schema, response, operation);
  return { items: results, totalCount };
}

/** Whether an answer holds the resource: a PUT's answer is not shown, a 2xx lookup may be empty. */
export function holdsResource(body: unknown): boolean {
  const results = asRecord(body).results;
  const found = asRecord(Array.isArray(results) ? results[0] : (results ?? body));
  return found.id !== undefined && found.id !== null;
}

/**
 * What a PUT answered: the service does not show it, so the resource is read from the answer when
 * it holds one, and read back otherwise.
 */
async function answeredOrReadBack<T>(response: RestResponse, schema: z.ZodType<T>, readBack: () => Promise<T | null>, operation: string): Promise<T> {
  if (holdsResource(response.body)) return read(schema, response, operation);
  const found = await readBack();
  if (!found) throw upstreamContractError(SERVICE, `${operation} updated the resource but it cannot be read back`, response.status);
  return found;
}

function toDimension(raw: unknown): DimensionDto {
  if (typeof raw === 'string') return { name: raw, type: null };
  const dimension = asRecord(raw);
  return { name: asText(dimension.name) ?? asText(dimension.dimension) ?? '', type: asText(dimension.type) };
}

/**
 * Grouped dimensions arrive as an object of categories (the service shows no more than that). A
 * category holds a list of names or of `{name, type}`, or an object of name to type; a list of
 * `{category, dimensions}` is read too.
 */
export function toDimensionGroups(results: unknown): DimensionGroupDto[] {
  if (Array.isArray(results)) {
    return results.map((raw) => {
      const group = asRecord(raw);
      return { category: asText(group.category) ?? asText(group.name) ?? '', dimensions: asArray(group.dimensions).map(toDimension) };
    });
  }
  return Object.entries(asRecord(results)).map(([category, dimensions]) => ({
    category,
    dimensions: Array.isArray(dimensions) ? dimensions.map(toDimension) : Object.entries(asRecord(dimensions)).map(([name, type]) => ({ name, type: asText(type) })),
  }));
}

/** Only the fields the caller gave (GraphQL's null means "not given"): the service keeps the others as they are. */
function givenOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined && field !== null)) as Partial<T>;
}

export interface DashboardsClient {
  listDashboards(page: PageRequest): Promise<NumberedPage<DashboardDto>>;
  getDashboard(idOrSlug: string): Promise<DashboardDto | null>;
  createDashboard(input: { name: string }): Promise<DashboardDto>;
  renameDashboard(idOrSlug: string, name: string): Promise<DashboardDto>;
  listEnvironments(page: PageRequest): Promise<NumberedPage<EnvironmentDto>>;
  getEnvironment(idOrSlug: string): Promise<EnvironmentDto | null>;
  createEnvironment(input: EnvironmentInput & { name: string }): Promise<EnvironmentDto>;
  updateEnvironment(idOrSlug: string, input: EnvironmentInput): Promise<EnvironmentDto>;
  /** Null when the dashboard does not exist. */
  listWidgets(dashboard: string, page: PageRequest): Promise<NumberedPage<WidgetDto> | null>;
  getWidget(dashboard: string, widgetId: string): Promise<WidgetDto | null>;
  createWidget(dashboard: string, input: WidgetInput): Promise<WidgetDto>;
  browseValues(params: { dimension: string; size?: number; filters?: readonly EnvironmentFilterDto[] }): Promise<DimensionValuesDto>;
  browseGrouped(): Promise<DimensionGroupDto[]>;
  getStats(): Promise<StatsDto>;
}

export interface DashboardsClientOptions {
  transport: RestTransport;
  token: string | undefined;
  /** Sees every stats answer (the subgraph keeps the quota as a gauge). */
  onStats?: (stats: StatsDto) => void;
}

const pageQuery = ({ page, pageSize }: PageRequest): Record<string, QueryValue> => ({ page, pageSize });

/** Every endpoint of the dashboards service, called from here and nowhere else. The token travels as the `service-token` header. */
export function createDashboardsClient({ transport, token, onStats }: DashboardsClientOptions): DashboardsClient {
  function call(method: RestCall['method'], operation: string, path: string, extra: Pick<RestCall, 'query' | 'body'> = {}): RestCall {
    if (!token) throw missingCredential(SERVICE, CREDENTIAL_HEADER);
    return { operation, method, path, ...extra, headers: { 'service-token': token }, secrets: [token] };
  }
  // A lookup's 404 is null; so is a 2xx that holds no resource (an empty `results`).
  const lookup = async <T>(schema: z.ZodType<T>, operation: string, path: string): Promise<T | null> => {
    const response = await transport.lookup(call('GET', operation, path));
    return response && holdsResource(response.body) ? read(schema, response, operation) : null;
  };

  const client: DashboardsClient = {
    async listDashboards(page) {
      const response = await transport.request(call('GET', 'listDashboards', '/dashboards', { query: pageQuery(page) }));
      return pageOf(ANSWERS.dashboards, response, 'listDashboards');
    },

    async getDashboard(idOrSlug) {
      return lookup(ANSWERS.dashboard, 'getDashboard', restPath('/dashboards/:id', { id: idOrSlug }));
    },

    async createDashboard({ name }) {
      const response = await transport.request(call('POST', 'createDashboard', '/dashboards', { body: { json: { name } } }));
      return read(ANSWERS.dashboard, response, 'createDashboard');
    },

    async renameDashboard(idOrSlug, name) {
      const response = await transport.request(call('PUT', 'renameDashboard', restPath('/dashboards/:id', { id: idOrSlug }), { body: { json: { name } } }));
      return answeredOrReadBack(response, ANSWERS.dashboard, () => client.getDashboard(idOrSlug), 'renameDashboard');
    },

    async listEnvironments(page) {
      const response = await transport.request(call('GET', 'listEnvironments', '/environments', { query: pageQuery(page) }));
      return pageOf(ANSWERS.environments, response, 'listEnvironments');
    },

    async getEnvironment(idOrSlug) {
      return lookup(ANSWERS.environment, 'getEnvironment', restPath('/environments/:id', { id: idOrSlug }));
    },

    async createEnvironment(input) {
      const response = await transport.request(call('POST', 'createEnvironment', '/environments', { body: { json: givenOnly(input) } }));
      return read(ANSWERS.environment, response, 'createEnvironment');
    },

    async updateEnvironment(idOrSlug, input) {
      const response = await transport.request(call('PUT', 'updateEnvironment', restPath('/environments/:id', { id: idOrSlug }), { body: { json: givenOnly(input) } }));
      return answeredOrReadBack(response, ANSWERS.environment, () => client.getEnvironment(idOrSlug), 'updateEnvironment');
    },

    async listWidgets(dashboard, page) {
      const response = await transport.lookup(call('GET', 'listWidgets', restPath('/dashboards/:dashboardId/widgets', { dashboardId: dashboard }), { query: pageQuery(page) }));
      if (!response) return null;
      const { items, totalCount } = pageOf(ANSWERS.widgets, response, 'listWidgets');
      return { items: items.map((widget) => ({ ...widget, dashboardRef: dashboard })), totalCount };
    },

    async getWidget(dashboard, widgetId) {
      const found = await lookup(ANSWERS.widget, 'getWidget', restPath('/dashboards/:dashboardId/widgets/:id', { dashboardId: dashboard, id: widgetId }));
      return found ? { ...found, dashboardRef: dashboard } : null;
    },

    async createWidget(dashboard, input) {
      const response = await transport.request(call('POST', 'createWidget', restPath('/dashboards/:dashboardId/widgets', { dashboardId: dashboard }), { body: { json: givenOnly(input) } }));
      return { ...read(ANSWERS.widget, response, 'createWidget'), dashboardRef: dashboard };
    },

    async browseValues({ dimension, size, filters }) {
      const response = await transport.request(
        call('GET', 'browseValues', '/browse/values', { query: { dimension, size, filters: filters && filters.length ? encodeFilters(filters) : undefined } }),
      );
      const { results, totalCount, currentPage } = read(ANSWERS.values, response, 'browseValues');
      return { values: results, totalCount, currentPage };
    },

    async browseGrouped() {
      const response = await transport.request(call('GET', 'browseGrouped', '/browse/grouped'));
      return toDimensionGroups(read(ANSWERS.grouped, response, 'browseGrouped'));
    },

    async getStats() {
      const response = await transport.request(call('GET', 'getStats', '/stats'));
      const stats = read(ANSWERS.stats, response, 'getStats');
      onStats?.(stats);
      return stats;
    },
  };
  return client;
}
