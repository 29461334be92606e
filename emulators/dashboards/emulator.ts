import type { EmulatorDefinition } from '../kit/emulator.ts';
import { jsonBody } from '../kit/bodies.ts';
import type { Reply, Route, RouteHandler, RouteRequest } from '../kit/router.ts';
import {
  DEMO_TOKEN,
  DIMENSION_GROUPS,
  DIMENSIONS,
  OPERATORS,
  SEEDED_REQUEST_COUNT,
  STATS_WINDOW_SECONDS,
  WIDGET_TYPES,
  nextId,
  seedDashboards,
  uniqueSlug,
  type DashboardsState,
  type EmulatedEnvironment,
  type EmulatedFilter,
  type EmulatedWidget,
  type TrafficRecord,
} from './data.ts';

const DEFAULT_PAGE_SIZE = 15;
const MAX_PAGE_SIZE = 100;
const DEFAULT_BROWSE_SIZE = 10;
const WIDGET_TEXT_FIELDS = ['reportId', 'reportSlug', 'environmentSlug', 'metric', 'interval', 'timeframe', 'primaryColor', 'sort'] as const;

interface FieldProblem {
  name: string;
  errors: string[];
}

/** The service's default error body, which it answers every failure with. */
function failure(code: number, message: string, fields: FieldProblem[] = [], headers?: Record<string, string>): Reply {
  return { status: code, body: { code, message, fields }, ...(headers ? { headers } : {}) };
}

/** Field errors gathered over a whole request, answered together as one validation failure. */
function createProblems() {
  const fields: FieldProblem[] = [];
  return {
    add(name: string, error: string) {
      const found = fields.find((field) => field.name === name);
      if (found) found.errors.push(error);
      else fields.push({ name, errors: [error] });
    },
    reply: (): Reply | undefined => (fields.length ? failure(400, 'Validation failed', fields) : undefined),
  };
}
type Problems = ReturnType<typeof createProblems>;

const ok = (results: unknown): Reply => ({ status: 200, body: { results: [results] } });

/**
 * How the real service answers where it deviates from the spec (sources in
 * docs/services/dashboards.md): every success is the full list envelope, `totalCount` and
 * `currentPage` included "even for single result responses"; an error's `code` is text such as
 * `"400.001"` and its field errors are under `errors`, not `fields`.
 */
function toRealDialect(reply: Reply): Reply {
  const body = reply.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return reply;
  if (reply.status >= 400) {
    if (!('code' in body)) return reply;
    const { fields, code, ...rest } = body;
    return { ...reply, body: { ...rest, code: `${String(code)}.001`, errors: Array.isArray(fields) && fields.length ? fields : null } };
  }
  if (Array.isArray(body.results) && !('totalCount' in body)) return { ...reply, body: { ...body, totalCount: body.results.length, currentPage: 0 } };
  return reply;
}
const objectBody = (request: RouteRequest): Record<string, unknown> => {
  const body = jsonBody(request);
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
};

/** A whole-number query parameter; its default when absent, NaN when it is not a whole number. */
function intParam(value: string | null, fallback: number): number {
  if (value === null || value === '') return fallback;
  return /^-?\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
}

function checkFilters(value: unknown, name: string, problems: Problems): EmulatedFilter[] {
  if (!Array.isArray(value)) {
    problems.add(name, 'must be an array of {dimension, operator, value}');
    return [];
  }
  return value.map((raw, index) => {
    const filter = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const at = `${name}[${index}]`;
    if (typeof filter.dimension !== 'string' || !DIMENSIONS.has(filter.dimension)) problems.add(`${at}.dimension`, `must be one of ${[...DIMENSIONS].join(', ')}`);
    if (typeof filter.operator !== 'string' || !(OPERATORS as readonly string[]).includes(filter.operator)) problems.add(`${at}.operator`, `must be one of ${OPERATORS.join(', ')}`);
    if (typeof filter.value !== 'string') problems.add(`${at}.value`, 'must be a string');
    return { dimension: String(filter.dimension), operator: String(filter.operator), value: String(filter.value) };
  });
}

function matches(actual: string | undefined, { operator, value }: EmulatedFilter): boolean {
  const text = actual ?? '';
  switch (operator) {
    case 'is':
      return text === value;
    case 'isNot':
      return text !== value;
    case 'contains':
      return text.includes(value);
    default:
      return !text.includes(value);
  }
}

export interface DashboardsEmulator extends EmulatorDefinition {
  state(): DashboardsState;
}

/**
 * The analytics dashboard service (section A of the platform services spec). Where the spec says
 * "not shown", the choices are the README's: PUT answers like GET, slugs stay as created, one
 * environment is the default at a time, widgets have no update or delete.
 */
export function createDashboardsEmulator(): DashboardsEmulator {
  let state = seedDashboards();

  const defaultEnvironment = () => state.environments.find((environment) => environment.default);
  /** The environment a request of traffic counts in: its tag's, or the default one's for a missing or unknown tag. */
  const environmentOf = (record: TrafficRecord) =>
    state.environments.find((environment) => environment.slug === record.environment)?.slug ?? defaultEnvironment()?.slug;
  const valueOf = (record: TrafficRecord, dimension: string) => (dimension === 'environment' ? environmentOf(record) : record[dimension]);

  /** Every call carries `service-token`; each authenticated call uses one request of the quota. */
  function authenticated(handler: RouteHandler): RouteHandler {
    return (request) => {
      if (request.headers['service-token'] !== DEMO_TOKEN) return failure(401, 'Invalid or missing service token');
      if (state.quota.remaining <= 0) return failure(429, 'The request quota of this period is used up', [], { 'retry-after': '3600' });
      state.quota.remaining -= 1;
      state.served += 1;
      return handler(request);
    };
  }

  /** A list envelope of one page; `page` is an index from 0. */
  function listPage<T>(request: RouteRequest, items: readonly T[]): Reply {
    const problems = createProblems();
    const page = intParam(request.query.get('page'), 0);
    const pageSize = intParam(request.query.get('pageSize'), DEFAULT_PAGE_SIZE);
    if (!Number.isInteger(page) || page < 0) problems.add('page', 'must be a whole number from 0');
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) problems.add('pageSize', `must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
    return problems.reply() ?? { status: 200, body: { results: items.slice(page * pageSize, (page + 1) * pageSize), totalCount: items.length, currentPage: page } };
  }

  const findDashboard = (ref: string | undefined) => state.dashboards.find((dashboard) => dashboard.id === ref || dashboard.slug === ref);
  const findEnvironment = (ref: string | undefined) => state.environments.find((environment) => environment.id === ref || environment.slug === ref);
  const dashboardNotFound = () => failure(404, 'Dashboard not found');

  function checkName(body: Record<string, unknown>, problems: Problems, required: boolean): void {
    if (!('name' in body) && !required) return;
    if (typeof body.name !== 'string' || body.name.trim() === '') problems.add('name', 'is required');
  }

  /** Checks an environment body: a new one (no `current`) needs a name; an update changes what it names. Returns the filters it will have. */
  function checkEnvironment(body: Record<string, unknown>, problems: Problems, current?: EmulatedEnvironment): EmulatedFilter[] {
    checkName(body, problems, !current);
    if ('default' in body && typeof body.default !== 'boolean') problems.add('default', 'must be true or false');
    if (current?.default && body.default === false) problems.add('default', 'one environment is always the default: make another environment the default instead');
    return 'filters' in body ? checkFilters(body.filters, 'filters', problems) : (current?.filters ?? []);
  }

  /** Makes `chosen` the only default environment: the catch-all is one bucket. */
  function makeDefault(chosen: EmulatedEnvironment): void {
    for (const environment of state.environments) environment.default = environment === chosen;
  }

  const presentEnvironmentSummary = ({ id, slug, name, default: isDefault }: EmulatedEnvironment) => ({ id, slug, name, default: isDefault });
  const presentWidget = ({ dashboardId: _dashboardId, ...widget }: EmulatedWidget) => widget;

  function browseValues(request: RouteRequest): Reply {
    const problems = createProblems();
    const dimension = request.query.get('dimension') ?? '';
    if (!DIMENSIONS.has(dimension)) problems.add('dimension', dimension ? `must be one of ${[...DIMENSIONS].join(', ')}` : 'is required');
    const size = intParam(request.query.get('size'), DEFAULT_BROWSE_SIZE);
    if (!Number.isInteger(size) || size < 1) problems.add('size', 'must be a whole number from 1');
    let filters: EmulatedFilter[] = [];
    const encoded = request.query.get('filters');
    if (encoded) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
      } catch {
        problems.add('filters', 'must be a base64-encoded JSON array of environment filters');
      }
      if (decoded !== undefined) filters = checkFilters(decoded, 'filters', problems);
    }
    const invalid = problems.reply();
    if (invalid) return invalid;
    const counts = new Map<string, number>();
    for (const record of state.traffic) {
      if (!filters.every((filter) => matches(valueOf(record, filter.dimension), filter))) continue;
      const value = valueOf(record, dimension);
      if (value !== undefined) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    const values = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([value]) => value);
    return { status: 200, body: { results: values.slice(0, size), totalCount: values.length, currentPage: 0 } };
  }

  function widgetFields(body: Record<string, unknown>, problems: Problems): Omit<EmulatedWidget, 'id' | 'dashboardId'> {
    if (typeof body.title !== 'string' || body.title.trim() === '') problems.add('title', 'is required');
    if (typeof body.type !== 'string' || body.type === '') problems.add('type', 'is required');
    else if (!(WIDGET_TYPES as readonly string[]).includes(body.type)) problems.add('type', `must be one of ${WIDGET_TYPES.join(', ')}`);
    const size = body.size ?? null;
    if (size !== null && (typeof size !== 'number' || size < 1 || size > 12)) problems.add('size', 'must be a number from 1 to 12');
    const rowCount = body.rowCount ?? null;
    if (rowCount !== null && (typeof rowCount !== 'number' || !Number.isInteger(rowCount) || rowCount < 1 || rowCount > 100)) problems.add('rowCount', 'must be a whole number from 1 to 100');
    const text = Object.fromEntries(
      WIDGET_TEXT_FIELDS.map((name) => {
        const value = body[name] ?? null;
        if (value !== null && typeof value !== 'string') problems.add(name, 'must be a string');
        return [name, value === null ? null : String(value)];
      }),
    ) as Record<(typeof WIDGET_TEXT_FIELDS)[number], string | null>;
    return { ...text, title: String(body.title), type: String(body.type), size: size as number | null, rowCount: rowCount as number | null };
  }

  const routes: Route[] = [
    {
      method: 'GET',
      path: '/dashboards',
      handler: authenticated((request) => listPage(request, state.dashboards)),
    },
    {
      method: 'POST',
      path: '/dashboards',
      handler: authenticated((request) => {
        const body = objectBody(request);
        const problems = createProblems();
        checkName(body, problems, true);
        const invalid = problems.reply();
        if (invalid) return invalid;
        const name = String(body.name);
        const dashboard = { id: nextId(state, 'dashboard'), name, slug: uniqueSlug(name, 'dashboard', state.dashboards) };
        state.dashboards.push(dashboard);
        return ok(dashboard);
      }),
    },
    {
      method: 'GET',
      path: '/dashboards/:dashboardId',
      handler: authenticated((request) => {
        const dashboard = findDashboard(request.params.dashboardId);
        return dashboard ? ok(dashboard) : dashboardNotFound();
      }),
    },
    {
      method: 'PUT',
      path: '/dashboards/:dashboardId',
      handler: authenticated((request) => {
        const dashboard = findDashboard(request.params.dashboardId);
        if (!dashboard) return dashboardNotFound();
        const body = objectBody(request);
        const problems = createProblems();
        checkName(body, problems, true);
        const invalid = problems.reply();
        if (invalid) return invalid;
        // The slug is an identifier others link by: it stays as created.
        dashboard.name = String(body.name);
        return ok(dashboard);
      }),
    },
    {
      method: 'GET',
      path: '/environments',
      handler: authenticated((request) => listPage(request, state.environments.map(presentEnvironmentSummary))),
    },
    {
      method: 'POST',
      path: '/environments',
      handler: authenticated((request) => {
        const body = objectBody(request);
        const problems = createProblems();
        const filters = checkEnvironment(body, problems);
        const invalid = problems.reply();
        if (invalid) return invalid;
        const name = String(body.name);
        const environment: EmulatedEnvironment = { id: nextId(state, 'environment'), name, slug: uniqueSlug(name, 'environment', state.environments), default: false, filters };
        state.environments.push(environment);
        if (body.default === true) makeDefault(environment);
        return ok(environment);
      }),
    },
    {
      method: 'GET',
      path: '/environments/:environmentId',
      handler: authenticated((request) => {
        const environment = findEnvironment(request.params.environmentId);
        return environment ? ok(environment) : failure(404, 'Environment not found');
      }),
    },
    {
      method: 'PUT',
      path: '/environments/:environmentId',
      handler: authenticated((request) => {
        const environment = findEnvironment(request.params.environmentId);
        if (!environment) return failure(404, 'Environment not found');
        const body = objectBody(request);
        const problems = createProblems();
        const filters = checkEnvironment(body, problems, environment);
        const invalid = problems.reply();
        if (invalid) return invalid;
        // Fields left out keep their values; the slug stays as created, since widgets name environments by it.
        if (typeof body.name === 'string') environment.name = body.name;
        environment.filters = filters;
        if (body.default === true) makeDefault(environment);
        return ok(environment);
      }),
    },
    {
      method: 'GET',
      path: '/dashboards/:dashboardId/widgets',
      handler: authenticated((request) => {
        const dashboard = findDashboard(request.params.dashboardId);
        if (!dashboard) return dashboardNotFound();
        return listPage(request, state.widgets.filter((widget) => widget.dashboardId === dashboard.id).map(presentWidget));
      }),
    },
    {
      method: 'POST',
      path: '/dashboards/:dashboardId/widgets',
      handler: authenticated((request) => {
        const dashboard = findDashboard(request.params.dashboardId);
        if (!dashboard) return dashboardNotFound();
        const problems = createProblems();
        const fields = widgetFields(objectBody(request), problems);
        const invalid = problems.reply();
        if (invalid) return invalid;
        const widget: EmulatedWidget = { ...fields, id: nextId(state, 'widget'), dashboardId: dashboard.id };
        state.widgets.push(widget);
        return ok(presentWidget(widget));
      }),
    },
    {
      method: 'GET',
      path: '/dashboards/:dashboardId/widgets/:widgetId',
      handler: authenticated((request) => {
        const dashboard = findDashboard(request.params.dashboardId);
        if (!dashboard) return dashboardNotFound();
        const widget = state.widgets.find((candidate) => candidate.dashboardId === dashboard.id && candidate.id === request.params.widgetId);
        return widget ? ok(presentWidget(widget)) : failure(404, 'Widget not found');
      }),
    },
    {
      method: 'GET',
      path: '/browse/values',
      handler: authenticated(browseValues),
    },
    {
      method: 'GET',
      path: '/browse/grouped',
      handler: authenticated(() => ({ status: 200, body: { results: DIMENSION_GROUPS, totalCount: DIMENSIONS.size, currentPage: 0 } })),
    },
    {
      method: 'GET',
      path: '/stats',
      handler: authenticated(() => {
        const nbReq = SEEDED_REQUEST_COUNT + state.served;
        return ok({ avgReqPerSec: Math.round(nbReq / STATS_WINDOW_SECONDS), nbReq, rateLimitingRemaining: state.quota.remaining, rateLimitingBase: state.quota.base });
      }),
    },
  ];

  const controls: Route[] = [
    {
      method: 'POST',
      path: '/__emulator/quota',
      handler: (request) => {
        const body = objectBody(request);
        const valid = (value: unknown) => value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0);
        if (!valid(body.remaining) || !valid(body.base)) return { status: 400, body: { message: 'expected {"remaining"?: whole number, "base"?: whole number}' } };
        if (typeof body.base === 'number') state.quota.base = body.base;
        if (typeof body.remaining === 'number') state.quota.remaining = body.remaining;
        return { status: 200, body: state.quota };
      },
    },
  ];

  return {
    name: 'dashboards',
    routes,
    controls,
    realDialect: toRealDialect,
    reset: () => {
      state = seedDashboards();
    },
    state: () => state,
  };
}
