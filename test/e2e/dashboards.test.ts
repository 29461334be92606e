import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKEN } from '../../emulators/dashboards/data.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { DIALECTS, startTestStack, type GraphQLResult } from '../support/stack.ts';

const t = await startTestStack();
const emulator = t.emulator('dashboards');
const recognition = t.emulator('recognition');
const auth = { 'x-dashboards-token': DEMO_TOKEN };
const metricsUrl = t.stack.services.find((service) => service.name === 'dashboards')!.subgraphUrl.replace('/graphql', '/metrics');

beforeEach(async () => {
  await emulator.reset();
  await recognition.reset();
});

const gql = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => t.gql<T>(query, { headers: auth, variables });
const firstError = (result: GraphQLResult<unknown>) => result.errors?.[0];
const apiCalls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}`);
const countOf = (calls: string[], call: string) => calls.filter((candidate) => candidate === call).length;

type Edges<T> = { totalCount: number | null; pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { cursor: string; node: T }[] };

describe.each(DIALECTS)('%s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.dialect(dialect);
  });

  describe('dashboards', () => {
    it('lists 15 per page by default with the total, and pages on from a cursor with page indexes from 0', async () => {
      const first = await gql<{ dashboards: Edges<{ id: string; name: string; slug: string }> }>('{ dashboards { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name slug } } } }');
      expect(first.errors).toBeUndefined();
      expect(first.data!.dashboards).toMatchObject({ totalCount: 20, pageInfo: { hasNextPage: true } });
      expect(first.data!.dashboards.edges).toHaveLength(15);
      expect(first.data!.dashboards.edges[0]!.node).toEqual({ id: 'dsh_0001', name: 'API health', slug: 'api-health' });

      const rest = await gql<{ dashboards: Edges<{ id: string }> }>('query ($after: String) { dashboards(first: 15, after: $after) { totalCount pageInfo { hasNextPage } edges { node { id } } } }', {
        after: first.data!.dashboards.pageInfo.endCursor,
      });
      expect(rest.data!.dashboards.edges.map((edge) => edge.node.id)).toEqual(['dsh_0016', 'dsh_0017', 'dsh_0018', 'dsh_0019', 'dsh_0020']);
      expect(rest.data!.dashboards.pageInfo.hasNextPage).toBe(false);

      const calls = await emulator.requests();
      expect(calls.map((call) => [call.path, call.query])).toEqual([
        ['/dashboards', { page: '0', pageSize: '15' }],
        ['/dashboards', { page: '1', pageSize: '15' }],
      ]);
      // The token travels only as the service's own header.
      expect(calls[0]!.headers).toContain('service-token');
      expect(calls[0]!.headers).not.toContain('x-dashboards-token');
      expect(calls[0]!.headers).not.toContain('authorization');
    });

    it('refuses pageSize 101 (`first: 101`) on every list before any call, naming the argument', async () => {
      for (const query of [
        '{ dashboards(first: 101) { totalCount } }',
        '{ environments(first: 101) { totalCount } }',
        '{ widgets(dashboardId: "api-health", first: 101) { totalCount } }',
        '{ dashboard(slug: "api-health") { widgets(first: 101) { totalCount } } }',
        '{ dashboards(first: 0) { totalCount } }',
      ]) {
        const result = await gql(query);
        expect(firstError(result)?.extensions, query).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'first' });
        expect(firstError(result)?.message).toContain('from 1 to 100');
      }
      // The nested case read its dashboard, and nothing else.
      expect(await apiCalls()).toEqual(['GET /dashboards/api-health']);
    });

    it('refuses a cursor of another list, or no cursor at all, before any call', async () => {
      const environments = await gql<{ environments: Edges<unknown> }>('{ environments(first: 1) { pageInfo { endCursor } } }');
      await emulator.clearRequests();
      for (const after of [environments.data!.environments.pageInfo.endCursor, 'not-a-cursor']) {
        const result = await gql('query ($after: String) { dashboards(after: $after) { totalCount } }', { after });
        expect(firstError(result)?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
      }
      expect(await apiCalls()).toEqual([]);
    });

    it('gets a dashboard by id or by slug, and null without an error when there is none', async () => {
      const result = await gql('{ byId: dashboard(id: "dsh_0002") { id name slug } bySlug: dashboard(slug: "product-usage") { id } missing: dashboard(slug: "nothing-here") { id } }');
      expect(result).toEqual({ data: { byId: { id: 'dsh_0002', name: 'Product usage', slug: 'product-usage' }, bySlug: { id: 'dsh_0002' }, missing: null } });
      // Asked together, the three lookups go out together: the cache cannot yet know that the id and the slug are one dashboard.
      expect((await apiCalls()).sort()).toEqual(['GET /dashboards/dsh_0002', 'GET /dashboards/nothing-here', 'GET /dashboards/product-usage']);
    });

    it('wants exactly one of id and slug, before any call', async () => {
      for (const query of ['{ dashboard { id } }', '{ dashboard(id: "dsh_0001", slug: "api-health") { id } }', '{ environment { id } }']) {
        expect(firstError(await gql(query))?.extensions, query).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id' });
      }
      expect(firstError(await gql('{ dashboard(slug: " ") { id } }'))?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'slug' });
      expect(await apiCalls()).toEqual([]);
    });

    it('creates dashboards whose slugs the service derives from their names, unique', async () => {
      const result = await gql('mutation { a: createDashboard(input: { name: "Ops Review" }) { id name slug } b: createDashboard(input: { name: "ops   review!" }) { id name slug } }');
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({ a: { id: 'dsh_0021', name: 'Ops Review', slug: 'ops-review' }, b: { id: 'dsh_0022', name: 'ops   review!', slug: 'ops-review-2' } });
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'POST', path: '/dashboards' });
      expect(call!.headers).toEqual(expect.arrayContaining(['service-token', 'content-type']));
      expect((await gql('{ dashboard(slug: "ops-review-2") { name } }')).data).toEqual({ dashboard: { name: 'ops   review!' } });
    });

    it('turns the service’s validation body into BAD_USER_INPUT with field errors', async () => {
      const result = await gql('mutation { createDashboard(input: { name: "" }) { id } }');
      expect(result.data).toEqual({ createDashboard: null });
      expect(firstError(result)).toMatchObject({
        message: 'dashboards: Validation failed',
        extensions: { code: 'BAD_USER_INPUT', service: 'dashboards', status: 400, fieldErrors: [{ field: 'name', messages: ['is required'] }] },
      });
    });

    it('renames by id or slug, keeping the slug; an unknown dashboard is NOT_FOUND', async () => {
      const renamed = await gql('mutation { renameDashboard(id: "latency", name: "Latency (p95)") { id name slug } }');
      expect(renamed.data).toEqual({ renameDashboard: { id: 'dsh_0007', name: 'Latency (p95)', slug: 'latency' } });
      expect(await apiCalls()).toEqual(['PUT /dashboards/latency']);

      const missing = await gql('mutation { renameDashboard(id: "dsh_9999", name: "x") { id } }');
      expect(firstError(missing)?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      const blank = await gql('mutation { renameDashboard(id: "dsh_0007", name: " ") { id } }');
      expect(firstError(blank)?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: [{ field: 'name', messages: ['is required'] }] });
    });

    it('reads a renamed dashboard back when the PUT answers without it', async () => {
      await emulator.fault({ path: '/dashboards/dsh_0005', method: 'PUT', status: 204, times: 1 });
      const result = await gql('mutation { renameDashboard(id: "dsh_0005", name: "Funnel") { id name } }');
      expect(result.data).toEqual({ renameDashboard: { id: 'dsh_0005', name: 'Checkout funnel' } });
      expect(await apiCalls()).toEqual(['PUT /dashboards/dsh_0005', 'GET /dashboards/dsh_0005']);
    });
  });

  describe('environments', () => {
    it('lists environments, reading the filters the list leaves out once per environment', async () => {
      const result = await gql<{ environments: Edges<{ slug: string; isDefault: boolean; filters: unknown[] }> }>(
        '{ environments { totalCount edges { node { id name slug isDefault filters { dimension operator value } } } } }',
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!.environments.totalCount).toBe(4);
      expect(result.data!.environments.edges.map(({ node }) => [node.slug, node.isDefault, node.filters.length])).toEqual([
        ['production', false, 1],
        ['staging', false, 1],
        ['everything-else', true, 0],
        ['eu-customers', false, 2],
      ]);
      const [list, ...reads] = await apiCalls();
      expect(list).toBe('GET /environments');
      expect(reads.sort()).toEqual(['env_0001', 'env_0002', 'env_0003', 'env_0004'].map((id) => `GET /environments/${id}`));

      await emulator.clearRequests();
      await gql('{ environments { edges { node { slug isDefault } } } }');
      expect(await apiCalls()).toEqual(['GET /environments']);
    });

    it('gets an environment by id or slug, and null when there is none', async () => {
      const result = await gql('{ byId: environment(id: "env_0001") { slug filters { value } } bySlug: environment(slug: "staging") { id } missing: environment(slug: "qa") { id } }');
      expect(result).toEqual({ data: { byId: { slug: 'production', filters: [{ value: 'api.shop.example' }] }, bySlug: { id: 'env_0002' }, missing: null } });
    });

    it('creates an environment with filters; making it the default unsets the former one', async () => {
      const created = await gql(
        'mutation { createEnvironment(input: { name: "Mobile apps", isDefault: true, filters: [{ dimension: "client", operator: "is", value: "okhttp" }] }) { id slug isDefault filters { dimension operator value } } }',
      );
      expect(created.data).toEqual({ createEnvironment: { id: 'env_0005', slug: 'mobile-apps', isDefault: true, filters: [{ dimension: 'client', operator: 'is', value: 'okhttp' }] } });
      const defaults = await gql<{ environments: Edges<{ slug: string; isDefault: boolean }> }>('{ environments { edges { node { slug isDefault } } } }');
      expect(defaults.data!.environments.edges.filter(({ node }) => node.isDefault).map(({ node }) => node.slug)).toEqual(['mobile-apps']);
    });

    it('shows one default within a mutation: a later field never sees the former default as still the default', async () => {
      const widget = (alias: string, slug: string) => `${alias}: createWidget(dashboardId: "api-health", input: { title: "${alias}", type: "line", environmentSlug: "${slug}" }) { environment { slug isDefault } }`;
      const result = await gql(`mutation {
        ${widget('before', 'everything-else')}
        switched: updateEnvironment(id: "staging", input: { isDefault: true }) { slug isDefault }
        ${widget('after', 'everything-else')}
        created: createEnvironment(input: { name: "Newest default", isDefault: true }) { slug isDefault }
        ${widget('last', 'staging')}
      }`);
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({
        before: { environment: { slug: 'everything-else', isDefault: true } },
        switched: { slug: 'staging', isDefault: true },
        after: { environment: { slug: 'everything-else', isDefault: false } },
        created: { slug: 'newest-default', isDefault: true },
        last: { environment: { slug: 'staging', isDefault: false } },
      });
      // What was cached before each switch is read again when asked.
      expect((await apiCalls()).filter((call) => call.startsWith('GET /environments/'))).toEqual(['GET /environments/everything-else', 'GET /environments/everything-else', 'GET /environments/staging']);
    });

    it('updates only what is given, by id or slug', async () => {
      const renamed = await gql('mutation { updateEnvironment(id: "staging", input: { name: "Pre-production" }) { id name slug filters { value } } }');
      expect(renamed.data).toEqual({ updateEnvironment: { id: 'env_0002', name: 'Pre-production', slug: 'staging', filters: [{ value: 'staging.api.shop.example' }] } });
      const refiltered = await gql('mutation { updateEnvironment(id: "env_0002", input: { filters: [], isDefault: true }) { name isDefault filters { value } } }');
      expect(refiltered.data).toEqual({ updateEnvironment: { name: 'Pre-production', isDefault: true, filters: [] } });
      expect(await apiCalls()).toEqual(['PUT /environments/staging', 'PUT /environments/env_0002']);
    });

    it('refuses an empty update before calling, and maps the service’s refusals', async () => {
      const empty = await gql('mutation { updateEnvironment(id: "staging", input: {}) { id } }');
      expect(firstError(empty)?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input' });
      expect(await apiCalls()).toEqual([]);

      const undefault = await gql('mutation { updateEnvironment(id: "everything-else", input: { isDefault: false }) { id } }');
      expect(firstError(undefault)?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', status: 400, fieldErrors: [{ field: 'default', messages: [expect.stringContaining('always the default')] }] });
      const operator = await gql('mutation { createEnvironment(input: { name: "x", filters: [{ dimension: "country", operator: "~=", value: "PT" }] }) { id } }');
      expect(firstError(operator)?.extensions?.fieldErrors).toEqual([{ field: 'filters[0].operator', messages: ['must be one of is, isNot, contains, notContains'] }]);
      const missing = await gql('mutation { updateEnvironment(id: "qa", input: { name: "QA" }) { id } }');
      expect(firstError(missing)?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    });
  });

  describe('widgets', () => {
    const WIDGET_FIELDS = 'id title reportId reportSlug environmentSlug type metric interval timeframe size rowCount primaryColor sort';

    it('fetches each distinct environment of a widget list once, and the dashboard once', async () => {
      const result = await gql<{ widgets: Edges<{ environmentSlug: string; environment: { slug: string }; dashboard: { slug: string } }> }>(
        '{ widgets(dashboardId: "api-health") { totalCount edges { node { title environmentSlug environment { slug name isDefault } dashboard { id slug } } } } }',
      );
      expect(result.errors).toBeUndefined();
      const widgets = result.data!.widgets.edges.map(({ node }) => node);
      expect(widgets).toHaveLength(12);
      for (const widget of widgets) {
        expect(widget.environment.slug).toBe(widget.environmentSlug);
        expect(widget.dashboard.slug).toBe('api-health');
      }
      const calls = await apiCalls();
      expect(calls.filter((call) => call.startsWith('GET /environments/')).sort()).toEqual(['GET /environments/everything-else', 'GET /environments/production', 'GET /environments/staging']);
      expect(countOf(calls, 'GET /dashboards/api-health')).toBe(1);
      expect(calls).toHaveLength(5);
    });

    it('answers a widget’s dashboard from the dashboard read by slug, cached under its id too', async () => {
      const result = await gql<{ dashboard: { widgets: Edges<{ dashboard: { id: string } }> } }>('{ dashboard(slug: "team-payments") { widgets { edges { node { dashboard { id name } } } } } }');
      expect(result.data!.dashboard.widgets.edges.map(({ node }) => node.dashboard)).toEqual([{ id: 'dsh_0003', name: 'Team: Payments' }]);
      expect(await apiCalls()).toEqual(['GET /dashboards/team-payments', 'GET /dashboards/dsh_0003/widgets']);
    });

    it('shares the environment loader across every dashboard of a request, and needs no call for a listed dashboard', async () => {
      const result = await gql<{ dashboards: Edges<{ widgets: Edges<{ environment: { slug: string } | null; dashboard: { id: string } }> }> }>(
        '{ dashboards(first: 3) { edges { node { id widgets { edges { node { environment { slug } dashboard { id } } } } } } } }',
      );
      expect(result.errors).toBeUndefined();
      const widgets = result.data!.dashboards.edges.flatMap(({ node }) => node.widgets.edges.map((edge) => edge.node));
      expect(widgets).toHaveLength(17);
      const calls = await apiCalls();
      expect(calls.filter((call) => call.startsWith('GET /environments/')).sort()).toEqual(
        ['eu-customers', 'everything-else', 'production', 'staging'].map((slug) => `GET /environments/${slug}`),
      );
      expect(calls.filter((call) => /^GET \/dashboards\/[^/]+$/.test(call))).toEqual([]);
    });

    it('gets a widget with every field, and null for an unknown widget or dashboard', async () => {
      const result = await gql(`{ widget(dashboardId: "dsh_0001", id: "wdg_0004") { ${WIDGET_FIELDS} } none: widget(dashboardId: "dsh_0001", id: "wdg_9999") { id } list: widgets(dashboardId: "nothing") { totalCount } }`);
      expect(result).toEqual({
        data: {
          widget: {
            id: 'wdg_0004',
            title: 'Top paths (production)',
            reportId: 'rpt_top_paths',
            reportSlug: 'top-paths',
            environmentSlug: 'production',
            type: 'table',
            metric: 'count',
            interval: null,
            timeframe: 'last-24-hours',
            size: 12,
            rowCount: 10,
            primaryColor: '#2563eb',
            sort: 'count:desc',
          },
          none: null,
          list: null,
        },
      });
    });

    it('creates a widget with every field, reachable from its dashboard', async () => {
      const input = {
        title: 'Refund volume',
        type: 'bar',
        reportId: 'rpt_requests',
        reportSlug: 'requests',
        environmentSlug: 'eu-customers',
        metric: 'count',
        interval: 'day',
        timeframe: 'last-7-days',
        size: 4,
        rowCount: 5,
        primaryColor: '#f59e0b',
        sort: 'count:asc',
      };
      const created = await gql<{ createWidget: Record<string, unknown> }>(
        `mutation ($input: CreateWidgetInput!) { createWidget(dashboardId: "refunds", input: $input) { ${WIDGET_FIELDS} environment { name } dashboard { id name } } }`,
        { input },
      );
      expect(created.errors).toBeUndefined();
      expect(created.data!.createWidget).toEqual({ ...input, id: 'wdg_0018', environment: { name: 'EU customers' }, dashboard: { id: 'dsh_0011', name: 'Refunds' } });
      const listed = await gql('{ dashboard(id: "dsh_0011") { widgets { totalCount edges { node { id title } } } widget(id: "wdg_0018") { title } } }');
      expect(listed.data).toEqual({ dashboard: { widgets: { totalCount: 1, edges: [{ node: { id: 'wdg_0018', title: 'Refund volume' } }] }, widget: { title: 'Refund volume' } } });
    });

    it('maps the service’s refusals of a widget', async () => {
      const invalid = await gql('mutation { createWidget(dashboardId: "dsh_0001", input: { title: " ", type: "radar", size: 40 }) { id } }');
      expect(firstError(invalid)?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        fieldErrors: [
          { field: 'title', messages: ['is required'] },
          { field: 'type', messages: ['must be one of line, bar, area, pie, number, table'] },
          { field: 'size', messages: ['must be a number from 1 to 12'] },
        ],
      });
      const missing = await gql('mutation { createWidget(dashboardId: "nothing", input: { title: "t", type: "line" }) { id } }');
      expect(firstError(missing)?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    });
  });

  describe('browsing dimensions', () => {
    it('sends filters as base64 JSON, round-tripped exactly as given', async () => {
      const filters = [
        { dimension: 'environment', operator: 'is', value: 'production' },
        { dimension: 'path', operator: 'contains', value: 'orders' },
      ];
      const result = await gql<{ dimensionValues: { values: string[]; totalCount: number; currentPage: number } }>(
        'query ($filters: [EnvironmentFilterInput!]) { dimensionValues(dimension: "host", size: 5, filters: $filters) { values totalCount currentPage } }',
        { filters },
      );
      expect(result.data!.dimensionValues).toEqual({ values: ['api.shop.example'], totalCount: 1, currentPage: 0 });
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ path: '/browse/values', query: { dimension: 'host', size: '5' } });
      expect(JSON.parse(Buffer.from(call!.query.filters!, 'base64').toString('utf8'))).toEqual(filters);
    });

    it('counts traffic of a missing or unknown environment in the default one', async () => {
      const result = await gql<{ dimensionValues: { values: string[] } }>('{ dimensionValues(dimension: "environment") { values totalCount } }');
      expect([...result.data!.dimensionValues.values].sort()).toEqual(['everything-else', 'production', 'staging']);
      const [call] = await emulator.requests();
      expect(call!.query).toEqual({ dimension: 'environment' });
    });

    it('lists the dimensions grouped into categories', async () => {
      const result = await gql<{ dimensionGroups: { category: string; dimensions: { name: string; type: string }[] }[] }>('{ dimensionGroups { category dimensions { name type } } }');
      expect(result.data!.dimensionGroups.map((group) => group.category)).toEqual(['Request', 'Response', 'Consumer', 'Environment']);
      expect(result.data!.dimensionGroups[1]).toEqual({ category: 'Response', dimensions: [{ name: 'status', type: 'number' }] });

      await emulator.clearRequests();
      const twice = await gql('{ a: dimensionGroups { category } b: dimensionGroups { dimensions { name } } s: dashboardStats { quotaBase } t: dashboardStats { quotaRemaining } }');
      expect(twice.errors).toBeUndefined();
      expect((await apiCalls()).sort()).toEqual(['GET /browse/grouped', 'GET /stats']);
    });

    it('maps an unknown dimension and undecodable filters to BAD_USER_INPUT with field errors', async () => {
      const unknown = await gql('{ dimensionValues(dimension: "planet") { values } }');
      expect(firstError(unknown)?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fieldErrors: [{ field: 'dimension', messages: [expect.stringContaining('must be one of')] }] });
      const badOperator = await gql('{ dimensionValues(dimension: "status", filters: [{ dimension: "status", operator: "gt", value: "399" }]) { values } }');
      expect(firstError(badOperator)?.extensions?.fieldErrors).toEqual([{ field: 'filters[0].operator', messages: ['must be one of is, isNot, contains, notContains'] }]);
    });
  });

  describe('account usage', () => {
    const gauge = async (name: string) => {
      const text = await (await fetch(metricsUrl)).text();
      expect(text).not.toContain(DEMO_TOKEN);
      const found = new RegExp(`^${name}\\{service="dashboards"\\} (\\d+)$`, 'm').exec(text);
      return found ? Number(found[1]) : undefined;
    };

    it('returns the stats and keeps the quota as gauges on the subgraph’s /metrics', async () => {
      const result = await gql<{ dashboardStats: { quotaRemaining: number } }>('{ dashboardStats { averageRequestsPerSecond requestCount quotaRemaining quotaBase } }');
      expect(result.data!.dashboardStats).toEqual({ averageRequestsPerSecond: 20, requestCount: 1_728_001, quotaRemaining: 99_999, quotaBase: 100_000 });
      expect(await gauge('dashboards_quota_remaining')).toBe(99_999);
      expect(await gauge('dashboards_quota_base')).toBe(100_000);

      await emulator.control('quota', { remaining: 1234, base: 5000 });
      await gql('{ dashboardStats { quotaRemaining } }');
      expect(await gauge('dashboards_quota_remaining')).toBe(1233);
      expect(await gauge('dashboards_quota_base')).toBe(5000);
    });

    it('carries totals past 32 bits, and names an average no Int carries as the service’s error at its path', async () => {
      await emulator.fault({ path: '/stats', status: 200, body: { results: [{ avgReqPerSec: 3_000_000_000, nbReq: 259_200_000_000_000, rateLimitingRemaining: 1, rateLimitingBase: 2 }] }, times: 1 });
      const result = await gql('{ dashboardStats { averageRequestsPerSecond requestCount quotaRemaining } }');
      expect(result.data).toEqual({ dashboardStats: { averageRequestsPerSecond: null, requestCount: 259_200_000_000_000, quotaRemaining: 1 } });
      expect(result.errors).toHaveLength(1);
      expect(firstError(result)).toMatchObject({
        message: 'dashboards: the service answered 3000000000, which Int cannot represent',
        path: ['dashboardStats', 'averageRequestsPerSecond'],
        extensions: { code: 'UPSTREAM_ERROR', service: 'dashboards' },
      });
      // The largest Int still arrives as it is.
      await emulator.fault({ path: '/stats', status: 200, body: { results: [{ avgReqPerSec: 2 ** 31 - 1, nbReq: 1, rateLimitingRemaining: 1, rateLimitingBase: 2 }] }, times: 1 });
      expect((await gql('{ dashboardStats { averageRequestsPerSecond } }')).data).toEqual({ dashboardStats: { averageRequestsPerSecond: 2 ** 31 - 1 } });
    });

    it('refuses an id from the service too long to send back as UPSTREAM_ERROR, never as the caller’s input', async () => {
      await emulator.fault({ path: '/dashboards/api-health', method: 'GET', status: 200, body: { results: [{ id: 'd'.repeat(600), name: 'API health', slug: 'api-health' }] }, times: 1 });
      const result = await gql('{ dashboard(slug: "api-health") { id name widgets(first: 2) { totalCount } } }');
      expect(result.data).toEqual({ dashboard: null });
      expect(firstError(result)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'dashboards' });
      expect(firstError(result)?.extensions).not.toHaveProperty('argument');
    });

    it('refuses a stats answer with a bad count, or none, as UPSTREAM_ERROR rather than stats of nulls', async () => {
      const good = { avgReqPerSec: 20, nbReq: 1_728_000, rateLimitingBase: 100_000 };
      for (const body of [{ results: [{ ...good, rateLimitingRemaining: 'n/a' }] }, { results: [] }, {}, { foo: 1 }, { results: {} }, { code: 401, message: 'x' }]) {
        await emulator.fault({ path: '/stats', status: 200, body, times: 1 });
        const result = await gql('{ dashboardStats { averageRequestsPerSecond requestCount quotaRemaining quotaBase } }');
        expect(result.data, JSON.stringify(body)).toEqual({ dashboardStats: null });
        expect(firstError(result)?.extensions, JSON.stringify(body)).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'dashboards' });
      }
      // One count null is that count unknown; the others arrive.
      await emulator.fault({ path: '/stats', status: 200, body: { results: [{ ...good, rateLimitingRemaining: null }] }, times: 1 });
      expect((await gql('{ dashboardStats { requestCount quotaRemaining } }')).data).toEqual({ dashboardStats: { requestCount: 1_728_000, quotaRemaining: null } });
    });

    it('names any count no Int carries as the service’s error at its field, keeping the rest of the answer', async () => {
      await emulator.fault({ path: '/dashboards', status: 200, body: { results: [{ id: 'dsh_0001', name: 'API health', slug: 'api-health' }], totalCount: 3_000_000_000, currentPage: 0 }, times: 1 });
      const list = await gql('{ dashboards { totalCount edges { node { id } } } }');
      expect(list.data).toEqual({ dashboards: { totalCount: null, edges: [{ node: { id: 'dsh_0001' } }] } });
      expect(list.errors).toHaveLength(1);
      expect(firstError(list)).toMatchObject({ path: ['dashboards', 'totalCount'], extensions: { code: 'UPSTREAM_ERROR', service: 'dashboards' } });
      expect(firstError(list)!.message).toBe('dashboards: the service answered 3000000000, which Int cannot represent');

      const widget = { id: 'wdg_big', title: 'Big', reportId: null, reportSlug: null, environmentSlug: null, type: 'table', metric: null, interval: null, timeframe: null, size: 1, rowCount: -3_000_000_000, primaryColor: null, sort: null };
      await emulator.fault({ path: '/dashboards/*', status: 200, body: { results: [widget], totalCount: 1, currentPage: 0 }, times: 1 });
      const widgets = await gql('{ widgets(dashboardId: "api-health") { totalCount edges { node { id title rowCount } } } }');
      expect(widgets.data).toEqual({ widgets: { totalCount: 1, edges: [{ node: { id: 'wdg_big', title: 'Big', rowCount: null } }] } });
      expect(widgets.errors?.map((error) => [error.path, error.extensions?.code])).toEqual([[['widgets', 'edges', 0, 'node', 'rowCount'], 'UPSTREAM_ERROR']]);
    });

    it('reports a used-up quota as RATE_LIMITED with the wait', async () => {
      await emulator.control('quota', { remaining: 0 });
      const result = await gql('{ dashboards { totalCount } }');
      expect(firstError(result)).toMatchObject({ message: 'dashboards: The request quota of this period is used up', extensions: { code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 3600 } });
    });
  });

  describe('authentication and failures', () => {
    it('answers a missing token with UNAUTHENTICATED and calls nothing', async () => {
      const result = await t.gql('{ dashboards { totalCount } dashboardStats { quotaRemaining } }');
      expect(result.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
      expect(firstError(result)?.message).toContain('x-dashboards-token');
      expect(await apiCalls()).toEqual([]);
    });

    it('maps the service’s 401 default body to UNAUTHENTICATED without echoing the token', async () => {
      const wrong = 'wrong-dashboards-token-8d3f1a6c';
      knownSecrets.add(wrong);
      const result = await t.gql('{ dashboard(id: "dsh_0001") { id } }', { headers: { 'x-dashboards-token': wrong } });
      expect(firstError(result)).toMatchObject({ message: 'dashboards: Invalid or missing service token', extensions: { code: 'UNAUTHENTICATED', status: 401 } });
      expect(JSON.stringify(result)).not.toContain(wrong);
    });

    it('reads the default error body with `code` as a number or as text, and field errors under `fields` or `errors`', async () => {
      const bodies = [
        { status: 400, body: { code: 400, message: 'Validation failed', fields: [{ name: 'name', errors: ['is too long'] }] } },
        { status: 422, body: { code: '422', message: 'Validation failed', errors: [{ name: 'name', errors: ['is too long'] }] } },
        // A validation body behind a status of no specific meaning is still the caller's input error.
        { status: 500, body: { code: '400', message: 'Validation failed', errors: [{ name: 'name', errors: ['is too long'] }] } },
      ];
      for (const { status, body } of bodies) {
        await emulator.fault({ path: '/dashboards', method: 'POST', status, body, times: 1 });
        const result = await gql('mutation { createDashboard(input: { name: "x" }) { id } }');
        expect(firstError(result)?.extensions, JSON.stringify(body)).toMatchObject({ code: 'BAD_USER_INPUT', status, fieldErrors: [{ field: 'name', messages: ['is too long'] }] });
      }
      await emulator.fault({ path: '/stats', status: 500, body: { code: '401', message: 'Token expired', fields: [] }, times: 1 });
      expect(firstError(await gql('{ dashboardStats { quotaRemaining } }'))?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 500 });
    });

    it('maps a 5xx to UPSTREAM_ERROR and a lookup’s 404 to null', async () => {
      await emulator.fault({ path: '/browse/grouped', status: 500, body: { code: 500, message: 'Internal error', fields: [] } });
      const failed = await gql('{ dimensionGroups { category } dashboard(id: "dsh_0404") { id } }');
      expect(failed.data).toEqual({ dimensionGroups: null, dashboard: null });
      expect(failed.errors).toHaveLength(1);
      expect(firstError(failed)).toMatchObject({ message: 'dashboards: Internal error', path: ['dimensionGroups'], extensions: { code: 'UPSTREAM_ERROR', status: 500, service: 'dashboards' } });
    });
  });

  describe('credential routing', () => {
    it('sends each token to its own service only', async () => {
      const result = await t.gql('{ dashboards(first: 1) { totalCount } hashtagTrends { hashtag } }', {
        headers: { ...auth, 'x-recognition-token': DEMO_TOKENS.member },
      });
      expect(result.errors).toBeUndefined();
      const dashboardsLog = await emulator.requests();
      const recognitionLog = await recognition.requests();
      expect(dashboardsLog).toHaveLength(1);
      expect(recognitionLog).toHaveLength(1);
      expect(dashboardsLog[0]!.headers).not.toContain('authorization');
      expect(dashboardsLog[0]!.query).not.toHaveProperty('access_token');
      expect(recognitionLog[0]!.headers).not.toContain('service-token');
      expect(recognitionLog[0]!.headers).not.toContain('x-dashboards-token');
      expect(JSON.stringify(recognitionLog)).not.toContain(DEMO_TOKEN);
      expect(JSON.stringify(dashboardsLog)).not.toContain(DEMO_TOKENS.member);
    });

    it('does not lend one service’s token to another', async () => {
      const onlyDashboards = await t.gql('{ hashtagTrends { hashtag } }', { headers: auth });
      expect(firstError(onlyDashboards)?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'recognition' });
      expect(await recognition.requests()).toEqual([]);
      const onlyRecognition = await t.gql('{ dashboardStats { quotaRemaining } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
      expect(firstError(onlyRecognition)?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'dashboards' });
      expect(await emulator.requests()).toEqual([]);
    });
  });
});

describe('the real service’s dialect', () => {
  it('is what the emulator speaks after the switch: totals on single answers, text codes and `errors` in failures', async () => {
    await emulator.dialect('real');
    const one = (await (await fetch(`${emulator.url}/dashboards/dsh_0001`, { headers: { 'service-token': DEMO_TOKEN } })).json()) as Record<string, unknown>;
    expect(one).toMatchObject({ results: [{ id: 'dsh_0001' }], totalCount: 1, currentPage: 0 });
    const refused = await fetch(`${emulator.url}/dashboards`, { method: 'POST', headers: { 'service-token': DEMO_TOKEN, 'content-type': 'application/json' }, body: '{}' });
    expect(await refused.json()).toMatchObject({ code: '400.001', errors: [{ name: 'name', errors: ['is required'] }] });
    await emulator.reset();
    expect(await (await fetch(`${emulator.url}/dashboards/dsh_0001`, { headers: { 'service-token': DEMO_TOKEN } })).json()).toEqual({ results: [{ id: 'dsh_0001', name: 'API health', slug: 'api-health' }] });
  });
});

describe('answers of the wrong shape', () => {
  it('is UPSTREAM_ERROR naming the missing field, never a dashboard with an empty name', async () => {
    await emulator.fault({ path: '/dashboards', method: 'GET', status: 200, body: { results: [{ id: 'dsh_x' }], totalCount: 1, currentPage: 0 } });
    const result = await gql('{ dashboards { edges { node { id name } } } }');
    expect(result.data?.dashboards).toBeNull();
    expect(firstError(result)).toMatchObject({ message: expect.stringMatching(/^dashboards: listDashboards .*wrong shape.*results\[0\]\.name/), extensions: { code: 'UPSTREAM_ERROR', service: 'dashboards', status: 200 } });
  });

  it('is UPSTREAM_ERROR when a created resource comes back without its id', async () => {
    await emulator.fault({ path: '/dashboards', method: 'POST', status: 200, body: { results: [{ name: 'Ops', slug: 'ops' }] } });
    const result = await gql('mutation { createDashboard(input: { name: "Ops" }) { id } }');
    expect(firstError(result)).toMatchObject({ message: expect.stringContaining('id'), extensions: { code: 'UPSTREAM_ERROR', service: 'dashboards' } });
  });
});
