import { pick, seededRandom } from '../kit/random.ts';

export interface EmulatedDashboard {
  id: string;
  name: string;
  slug: string;
}

export interface EmulatedFilter {
  dimension: string;
  operator: string;
  value: string;
}

export interface EmulatedEnvironment {
  id: string;
  name: string;
  slug: string;
  default: boolean;
  filters: EmulatedFilter[];
}

export interface EmulatedWidget {
  id: string;
  dashboardId: string;
  title: string;
  reportId: string | null;
  reportSlug: string | null;
  environmentSlug: string | null;
  type: string;
  metric: string | null;
  interval: string | null;
  timeframe: string | null;
  size: number | null;
  rowCount: number | null;
  primaryColor: string | null;
  sort: string | null;
}

/** One request the account's API served: what browsing reads. `environment` is the tag it was sent with, if any. */
export type TrafficRecord = Record<string, string | undefined>;

export interface DashboardsState {
  dashboards: EmulatedDashboard[];
  environments: EmulatedEnvironment[];
  widgets: EmulatedWidget[];
  traffic: TrafficRecord[];
  quota: { base: number; remaining: number };
  /** Authenticated calls served since the reset, added to the request count in stats. */
  served: number;
  /** Last number given to each kind of id. */
  counters: { dashboard: number; environment: number; widget: number };
}

/** The demo account's token: printed by `npm start` and used by the tests. */
export const DEMO_TOKEN = 'demo-dashboards-token-5a8c2e7f1b9d4e6a';

/** The emulator's choice where the spec says "not shown". */
export const OPERATORS = ['is', 'isNot', 'contains', 'notContains'] as const;
export const WIDGET_TYPES = ['line', 'bar', 'area', 'pie', 'number', 'table'] as const;

/** Browsable dimensions, by category, with their types. */
export const DIMENSION_GROUPS: Record<string, { name: string; type: string }[]> = {
  Request: [
    { name: 'method', type: 'string' },
    { name: 'path', type: 'string' },
    { name: 'host', type: 'string' },
    { name: 'apiVersion', type: 'string' },
  ],
  Response: [{ name: 'status', type: 'number' }],
  Consumer: [
    { name: 'country', type: 'string' },
    { name: 'client', type: 'string' },
  ],
  Environment: [{ name: 'environment', type: 'string' }],
};
export const DIMENSIONS = new Set(Object.values(DIMENSION_GROUPS).flatMap((group) => group.map((dimension) => dimension.name)));

/** Requests the account made before the seeded day, so the count in stats looks like an account in use. */
export const SEEDED_REQUEST_COUNT = 1_728_000;
/** The window `avgReqPerSec` averages over. */
export const STATS_WINDOW_SECONDS = 24 * 60 * 60;
const QUOTA_BASE = 100_000;

const ID_PREFIXES = { dashboard: 'dsh', environment: 'env', widget: 'wdg' } as const;

/** The next id of a kind, numbered in creation order. */
export function nextId(state: DashboardsState, kind: keyof DashboardsState['counters']): string {
  state.counters[kind] += 1;
  return `${ID_PREFIXES[kind]}_${String(state.counters[kind]).padStart(4, '0')}`;
}

/** A URL-safe form of a name: lower case, accents dropped, anything else a single hyphen. */
function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug || fallback;
}

/** The slug of a name, made unique among `taken` with a numeric suffix. */
export function uniqueSlug(name: string, fallback: string, taken: readonly { slug: string }[]): string {
  const base = slugify(name, fallback);
  const used = new Set(taken.map((item) => item.slug));
  let slug = base;
  for (let suffix = 2; used.has(slug); suffix += 1) slug = `${base}-${suffix}`;
  return slug;
}

const DASHBOARD_NAMES = [
  'API health',
  'Product usage',
  'Team: Payments',
  // Slugifies like the one before it: the service keeps slugs unique with a suffix.
  'Team Payments',
  'Checkout funnel',
  'Errors by country',
  'Latency',
  'Mobile clients',
  'Partner traffic',
  'Webhooks',
  'Refunds',
  'Search',
  'Auth',
  'Catalog',
  'Inventory',
  'Shipping',
  'Pricing',
  'Notifications',
  'Onboarding',
  'Status page',
];

const ENVIRONMENTS: Omit<EmulatedEnvironment, 'id' | 'slug'>[] = [
  { name: 'Production', default: false, filters: [{ dimension: 'host', operator: 'is', value: 'api.shop.example' }] },
  { name: 'Staging', default: false, filters: [{ dimension: 'host', operator: 'is', value: 'staging.api.shop.example' }] },
  { name: 'Everything else', default: true, filters: [] },
  {
    name: 'EU customers',
    default: false,
    filters: [
      { dimension: 'country', operator: 'isNot', value: 'US' },
      { dimension: 'country', operator: 'isNot', value: 'BR' },
    ],
  },
];

type WidgetSeed = Omit<EmulatedWidget, 'id' | 'dashboardId'>;

const REPORTS = [
  { reportId: 'rpt_requests', reportSlug: 'requests', metric: 'count' },
  { reportId: 'rpt_latency', reportSlug: 'latency', metric: 'p95' },
  { reportId: 'rpt_errors', reportSlug: 'errors', metric: 'errorRate' },
  { reportId: 'rpt_top_paths', reportSlug: 'top-paths', metric: 'count' },
];

function widget(title: string, environmentSlug: string, report: number, type: string, extra: Partial<WidgetSeed> = {}): WidgetSeed {
  const table = type === 'table';
  return {
    title,
    environmentSlug,
    ...REPORTS[report]!,
    type,
    interval: table ? null : 'hour',
    timeframe: 'last-24-hours',
    size: table ? 12 : 6,
    rowCount: table ? 10 : null,
    primaryColor: '#2563eb',
    sort: table ? 'count:desc' : null,
    ...extra,
  };
}

/** "API health": 12 widgets over three environments, so a widget list fetches three environments. */
const API_HEALTH: WidgetSeed[] = [
  widget('Requests (production)', 'production', 0, 'line'),
  widget('Latency p95 (production)', 'production', 1, 'line'),
  widget('Error rate (production)', 'production', 2, 'area', { primaryColor: '#dc2626' }),
  widget('Top paths (production)', 'production', 3, 'table'),
  widget('Requests today (production)', 'production', 0, 'number', { interval: null, size: 3 }),
  widget('Requests (staging)', 'staging', 0, 'line'),
  widget('Latency p95 (staging)', 'staging', 1, 'line'),
  widget('Error rate (staging)', 'staging', 2, 'bar', { primaryColor: '#dc2626' }),
  widget('Top paths (staging)', 'staging', 3, 'table'),
  widget('Untagged requests', 'everything-else', 0, 'line', { primaryColor: '#6b7280' }),
  widget('Untagged errors', 'everything-else', 2, 'bar', { primaryColor: '#6b7280' }),
  widget('Untagged top paths', 'everything-else', 3, 'table'),
];

const PRODUCT_USAGE: WidgetSeed[] = [
  widget('Requests by week', 'production', 0, 'bar', { interval: 'week', timeframe: 'last-90-days' }),
  widget('EU share', 'eu-customers', 0, 'pie', { interval: null, timeframe: 'last-30-days' }),
  widget('Top paths this month', 'production', 3, 'table', { timeframe: 'last-30-days', rowCount: 25 }),
  widget('Latency trend', 'production', 1, 'line', { interval: 'day', timeframe: 'last-30-days' }),
];

const PAYMENTS: WidgetSeed[] = [widget('Payment errors', 'production', 2, 'line', { primaryColor: '#16a34a' })];

const HOSTS: Record<string, string> = { production: 'api.shop.example', staging: 'staging.api.shop.example' };
const PATHS = ['/v1/orders', '/v1/orders/{id}', '/v1/customers', '/v1/payments', '/v1/refunds', '/v1/products'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const STATUSES = ['200', '200', '200', '200', '201', '204', '400', '401', '404', '429', '500'];
const COUNTRIES = ['US', 'US', 'PT', 'GB', 'DE', 'BR', 'JP'];
const CLIENTS = ['curl', 'python-requests', 'okhttp', 'axios', 'Go-http-client'];
/** Tags traffic arrives with: undefined is no tag, `qa` names no environment; both count in the default one. */
const TAGS = ['production', 'production', 'production', 'production', 'staging', 'staging', undefined, undefined, 'qa'];

function seedTraffic(): TrafficRecord[] {
  const random = seededRandom(11);
  return Array.from({ length: 400 }, () => {
    const environment = pick(random, TAGS);
    return {
      environment,
      host: HOSTS[environment ?? ''] ?? 'legacy.shop.example',
      method: pick(random, METHODS),
      path: pick(random, PATHS),
      status: pick(random, STATUSES),
      country: pick(random, COUNTRIES),
      client: pick(random, CLIENTS),
      apiVersion: random() < 0.7 ? '2025-06' : '2024-01',
    };
  });
}

/** The demo account: 20 dashboards (two whose names slugify alike), 4 environments, 17 widgets, 400 requests of traffic. */
export function seedDashboards(): DashboardsState {
  const state: DashboardsState = {
    dashboards: [],
    environments: [],
    widgets: [],
    traffic: seedTraffic(),
    quota: { base: QUOTA_BASE, remaining: QUOTA_BASE },
    served: 0,
    counters: { dashboard: 0, environment: 0, widget: 0 },
  };
  for (const environment of ENVIRONMENTS) {
    const id = nextId(state, 'environment');
    state.environments.push({ ...environment, filters: environment.filters.map((filter) => ({ ...filter })), id, slug: uniqueSlug(environment.name, 'environment', state.environments) });
  }
  const widgetsByName: Record<string, WidgetSeed[]> = { 'API health': API_HEALTH, 'Product usage': PRODUCT_USAGE, 'Team: Payments': PAYMENTS };
  for (const name of DASHBOARD_NAMES) {
    const dashboard = { id: nextId(state, 'dashboard'), name, slug: uniqueSlug(name, 'dashboard', state.dashboards) };
    state.dashboards.push(dashboard);
    for (const seed of widgetsByName[name] ?? []) state.widgets.push({ ...seed, id: nextId(state, 'widget'), dashboardId: dashboard.id });
  }
  return state;
}
