import { SERVICE_ENTRY } from '../../lib/services.ts';
import { missingCredential, upstreamContractError } from '../kit/errors.ts';
import { asArray, asBoolean, asNumber, asRecord, asText } from '../kit/envelopes.ts';
import type { NumberedPage } from '../kit/connections.ts';
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
  default: boolean;
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
  nbReq: number | null;
  rateLimitingRemaining: number | null;
  rateLimitingBase: number | null;
}

export interface PageRequest {
  page: number;
  pageSize: number;
}

/** A count the schema types as Int: a fractional value would fail the whole widget, so it reads as null. */
const wholeNumber = (value: unknown): number | null => {
  const parsed = asNumber(value);
  return parsed !== null && Number.isInteger(parsed) ? parsed : null;
};

/** The base64 JSON the service reads `filters` as. */
export function encodeFilters(filters: readonly EnvironmentFilterDto[]): string {
  return Buffer.from(JSON.stringify(filters.map(({ dimension, operator, value }) => ({ dimension, operator, value })))).toString('base64');
}

/** The items of a list envelope `{results, totalCount, currentPage}`, or of a bare array. */
export function pageOf<T>(body: unknown, map: (raw: unknown) => T): NumberedPage<T> {
  const items = asArray(Array.isArray(body) ? body : asRecord(body).results).map(map);
  return { items, totalCount: asNumber(asRecord(body).totalCount) };
}

/** The one resource of `{results: [X]}`; `results` holding the object itself, or the object bare, are read too. */
function firstResult(body: unknown): unknown {
  const results = asRecord(body).results;
  return Array.isArray(results) ? results[0] : results ?? body;
}

/** The resource an answer holds, when it holds one with an id. */
export function resultOf(body: unknown): Record<string, unknown> | undefined {
  const found = asRecord(firstResult(body));
  return found.id === undefined || found.id === null ? undefined : found;
}

function oneResult(response: RestResponse, what: string): Record<string, unknown> {
  const found = resultOf(response.body);
  if (!found) throw upstreamContractError(SERVICE, `the answer holds no ${what}`, response.status);
  return found;
}

/**
 * What a PUT answered: the service does not show it, so the resource is taken from the answer when
 * it is there, and read back otherwise.
 */
async function answeredOrReadBack<T>(response: RestResponse, map: (raw: unknown) => T, readBack: () => Promise<T | null>, what: string): Promise<T> {
  const answered = resultOf(response.body);
  if (answered) return map(answered);
  const read = await readBack();
  if (!read) throw upstreamContractError(SERVICE, `the ${what} was updated but cannot be read back`, response.status);
  return read;
}

export function toDashboard(raw: unknown): DashboardDto {
  const dashboard = asRecord(raw);
  return { id: String(dashboard.id), name: String(dashboard.name ?? ''), slug: String(dashboard.slug ?? '') };
}

function toFilter(raw: unknown): EnvironmentFilterDto {
  const filter = asRecord(raw);
  return { dimension: String(filter.dimension ?? ''), operator: String(filter.operator ?? ''), value: String(filter.value ?? '') };
}

export function toEnvironment(raw: unknown): EnvironmentDto {
  const environment = asRecord(raw);
  return {
    id: String(environment.id),
    name: String(environment.name ?? ''),
    slug: String(environment.slug ?? ''),
    default: asBoolean(environment.default) ?? false,
    ...(Array.isArray(environment.filters) ? { filters: environment.filters.map(toFilter) } : {}),
  };
}

function toWidget(raw: unknown, dashboardRef: string): WidgetDto {
  const widget = asRecord(raw);
  return {
    id: String(widget.id),
    dashboardRef,
    title: asText(widget.title),
    reportId: asText(widget.reportId),
    reportSlug: asText(widget.reportSlug),
    environmentSlug: asText(widget.environmentSlug),
    type: asText(widget.type),
    metric: asText(widget.metric),
    interval: asText(widget.interval),
    timeframe: asText(widget.timeframe),
    size: asNumber(widget.size),
    rowCount: wholeNumber(widget.rowCount),
    primaryColor: asText(widget.primaryColor),
    sort: asText(widget.sort),
  };
}

function toDimension(raw: unknown): DimensionDto {
  if (typeof raw === 'string') return { name: raw, type: null };
  const dimension = asRecord(raw);
  return { name: String(dimension.name ?? dimension.dimension ?? ''), type: asText(dimension.type) };
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
      return { category: String(group.category ?? group.name ?? ''), dimensions: asArray(group.dimensions).map(toDimension) };
    });
  }
  return Object.entries(asRecord(results)).map(([category, dimensions]) => ({
    category,
    dimensions: Array.isArray(dimensions) ? dimensions.map(toDimension) : Object.entries(asRecord(dimensions)).map(([name, type]) => ({ name, type: asText(type) })),
  }));
}

function toStats(raw: unknown): StatsDto {
  const stats = asRecord(raw);
  return { avgReqPerSec: asNumber(stats.avgReqPerSec), nbReq: asNumber(stats.nbReq), rateLimitingRemaining: asNumber(stats.rateLimitingRemaining), rateLimitingBase: asNumber(stats.rateLimitingBase) };
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

const segment = encodeURIComponent;
const pageQuery = ({ page, pageSize }: PageRequest): Record<string, QueryValue> => ({ page, pageSize });

/** Every endpoint of the dashboards service, called from here and nowhere else. The token travels as the `service-token` header. */
export function createDashboardsClient({ transport, token, onStats }: DashboardsClientOptions): DashboardsClient {
  function call(method: RestCall['method'], operation: string, path: string, extra: Pick<RestCall, 'query' | 'body'> = {}): RestCall {
    if (!token) throw missingCredential(SERVICE, CREDENTIAL_HEADER);
    return { operation, method, path, ...extra, headers: { 'service-token': token }, secrets: [token] };
  }
  const lookup = async (operation: string, path: string) => {
    const response = await transport.lookup(call('GET', operation, path));
    return response ? resultOf(response.body) ?? null : null;
  };

  const client: DashboardsClient = {
    async listDashboards(page) {
      const response = await transport.request(call('GET', 'listDashboards', '/dashboards', { query: pageQuery(page) }));
      return pageOf(response.body, toDashboard);
    },

    async getDashboard(idOrSlug) {
      const found = await lookup('getDashboard', `/dashboards/${segment(idOrSlug)}`);
      return found ? toDashboard(found) : null;
    },

    async createDashboard({ name }) {
      const response = await transport.request(call('POST', 'createDashboard', '/dashboards', { body: { json: { name } } }));
      return toDashboard(oneResult(response, 'dashboard'));
    },

    async renameDashboard(idOrSlug, name) {
      const response = await transport.request(call('PUT', 'renameDashboard', `/dashboards/${segment(idOrSlug)}`, { body: { json: { name } } }));
      return answeredOrReadBack(response, toDashboard, () => client.getDashboard(idOrSlug), 'dashboard');
    },

    async listEnvironments(page) {
      const response = await transport.request(call('GET', 'listEnvironments', '/environments', { query: pageQuery(page) }));
      return pageOf(response.body, toEnvironment);
    },

    async getEnvironment(idOrSlug) {
      const found = await lookup('getEnvironment', `/environments/${segment(idOrSlug)}`);
      return found ? toEnvironment(found) : null;
    },

    async createEnvironment(input) {
      const response = await transport.request(call('POST', 'createEnvironment', '/environments', { body: { json: givenOnly(input) } }));
      return toEnvironment(oneResult(response, 'environment'));
    },

    async updateEnvironment(idOrSlug, input) {
      const response = await transport.request(call('PUT', 'updateEnvironment', `/environments/${segment(idOrSlug)}`, { body: { json: givenOnly(input) } }));
      return answeredOrReadBack(response, toEnvironment, () => client.getEnvironment(idOrSlug), 'environment');
    },

    async listWidgets(dashboard, page) {
      const response = await transport.lookup(call('GET', 'listWidgets', `/dashboards/${segment(dashboard)}/widgets`, { query: pageQuery(page) }));
      return response ? pageOf(response.body, (raw) => toWidget(raw, dashboard)) : null;
    },

    async getWidget(dashboard, widgetId) {
      const found = await lookup('getWidget', `/dashboards/${segment(dashboard)}/widgets/${segment(widgetId)}`);
      return found ? toWidget(found, dashboard) : null;
    },

    async createWidget(dashboard, input) {
      const response = await transport.request(call('POST', 'createWidget', `/dashboards/${segment(dashboard)}/widgets`, { body: { json: givenOnly(input) } }));
      return toWidget(oneResult(response, 'widget'), dashboard);
    },

    async browseValues({ dimension, size, filters }) {
      const response = await transport.request(
        call('GET', 'browseValues', '/browse/values', { query: { dimension, size, filters: filters && filters.length ? encodeFilters(filters) : undefined } }),
      );
      const body = asRecord(response.body);
      return {
        values: asArray(Array.isArray(response.body) ? response.body : body.results).map(String),
        totalCount: asNumber(body.totalCount),
        currentPage: asNumber(body.currentPage),
      };
    },

    async browseGrouped() {
      const response = await transport.request(call('GET', 'browseGrouped', '/browse/grouped'));
      return toDimensionGroups(asRecord(response.body).results ?? response.body);
    },

    async getStats() {
      const response = await transport.request(call('GET', 'getStats', '/stats'));
      const stats = toStats(firstResult(response.body));
      onStats?.(stats);
      return stats;
    },
  };
  return client;
}
