import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { GraphQLError, buildSchema } from 'graphql';
import { ConfigError } from '../../lib/config.ts';
import { createCircuitBreaker, isRefusal, readCircuitBreakerSettings, type BreakerChange, type BreakerPermit, type BreakerRefusal, type CircuitBreaker } from '../../lib/circuitBreaker.ts';
import { createBreakerGuards } from '../../lib/circuitBreakerGuards.ts';
import { createLogger } from '../../lib/logger.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { readDashboardsConfig } from '../../subgraphs/dashboards/config.ts';
import { readImportsConfig } from '../../subgraphs/imports/config.ts';
import { failedDirectFetch, failedRootFetch } from '../../gateway/failedFetch.ts';

function setUp(failures = 3, cooldownMs = 1000) {
  let now = 0;
  const changes: string[] = [];
  const breaker = createCircuitBreaker({ service: 'svc', failures, cooldownMs, now: () => now, onChange: (change: BreakerChange) => changes.push(`${change.from}>${change.to}`) });
  return { breaker, changes, advance: (ms: number) => (now += ms) };
}

function permit(breaker: CircuitBreaker): BreakerPermit {
  const entry = breaker.enter();
  if (isRefusal(entry)) throw new Error(`refused with ${entry.retryAfterMs} ms to wait`);
  return entry;
}

function refusal(breaker: CircuitBreaker): BreakerRefusal {
  const entry = breaker.enter();
  if (!isRefusal(entry)) throw new Error('let through');
  return entry;
}

const failTimes = (breaker: CircuitBreaker, times: number) => {
  for (let i = 0; i < times; i += 1) permit(breaker).failed();
};

describe('the circuit breaker', () => {
  it('stays closed below the threshold, and a success starts the run again', () => {
    const { breaker, changes } = setUp(3);
    failTimes(breaker, 2);
    permit(breaker).succeeded();
    failTimes(breaker, 2);
    expect(breaker.state()).toBe('closed');
    expect(changes).toEqual([]);
  });

  it('opens after the threshold of failures in a row and refuses every call for the cool-down', () => {
    const { breaker, changes, advance } = setUp(3, 1000);
    failTimes(breaker, 3);
    expect(breaker.state()).toBe('open');
    expect(changes).toEqual(['closed>open']);
    expect(refusal(breaker).retryAfterMs).toBe(1000);
    advance(999);
    expect(refusal(breaker).retryAfterMs).toBe(1);
    expect(breaker.state()).toBe('open');
  });

  it('lets exactly one probe through once the cool-down is over; concurrent callers still fail fast', () => {
    const { breaker, changes, advance } = setUp(3, 1000);
    failTimes(breaker, 3);
    advance(1000);
    expect(breaker.state()).toBe('halfOpen');
    const probe = permit(breaker);
    expect(isRefusal(breaker.enter())).toBe(true);
    expect(isRefusal(breaker.enter())).toBe(true);
    probe.succeeded();
    expect(breaker.state()).toBe('closed');
    expect(changes).toEqual(['closed>open', 'open>halfOpen', 'halfOpen>closed']);
    // Closed again: a fresh run is needed to open it.
    failTimes(breaker, 2);
    expect(breaker.state()).toBe('closed');
  });

  it('reopens for a whole cool-down when the probe fails', () => {
    const { breaker, changes, advance } = setUp(3, 1000);
    failTimes(breaker, 3);
    advance(1500);
    permit(breaker).failed();
    expect(breaker.state()).toBe('open');
    expect(refusal(breaker).retryAfterMs).toBe(1000);
    advance(1000);
    expect(breaker.state()).toBe('halfOpen');
    expect(changes).toEqual(['closed>open', 'open>halfOpen', 'halfOpen>open', 'open>halfOpen']);
  });

  it('hands the probe slot back when the probe says nothing about the service', () => {
    const { breaker, advance } = setUp(1, 1000);
    failTimes(breaker, 1);
    advance(1000);
    permit(breaker).abandoned();
    expect(breaker.state()).toBe('halfOpen');
    permit(breaker).succeeded();
    expect(breaker.state()).toBe('closed');
  });

  it('ignores the outcomes of calls let through before the last change', () => {
    const { breaker, advance } = setUp(2, 1000);
    const early = [permit(breaker), permit(breaker), permit(breaker)];
    early[0]!.failed();
    early[1]!.failed();
    expect(breaker.state()).toBe('open');
    // A call that started while closed neither closes the open breaker nor counts twice.
    early[2]!.succeeded();
    expect(breaker.state()).toBe('open');
    advance(1000);
    const probe = permit(breaker);
    probe.succeeded();
    probe.failed();
    expect(breaker.state()).toBe('closed');
  });

  it('abandoned calls neither count as failures nor break a run', () => {
    const { breaker } = setUp(2);
    permit(breaker).failed();
    permit(breaker).abandoned();
    expect(breaker.state()).toBe('closed');
    permit(breaker).failed();
    expect(breaker.state()).toBe('open');
  });

  it('refuses a threshold below 1: 0 means no breaker at all', () => {
    expect(() => createCircuitBreaker({ service: 'svc', failures: 0, cooldownMs: 1000 })).toThrow(RangeError);
  });
});

describe('breaker guards', () => {
  const lines: string[] = [];
  const logger = createLogger({ name: 'test', level: 'warn', destination: { write: (line: string) => lines.push(line) } });

  it('fail fast with UPSTREAM_UNAVAILABLE, the service and retryAfterSeconds, counted and published', async () => {
    let now = 0;
    const registry = new Registry();
    const guardOf = createBreakerGuards({ settings: { failures: 2, cooldownMs: 4500, now: () => now }, logger, registry, prefix: 'svc', describe: (name) => `the ${name} subgraph` });
    const guard = guardOf('recognition')!;
    expect(guardOf('recognition')).toBe(guard);
    expect(await registry.metrics()).toContain('svc_circuit_breaker_state{service="recognition"} 0');
    guard.admit().failed();
    guard.admit().failed();
    now += 500;
    let refused: unknown;
    try {
      guard.admit();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(GraphQLError);
    expect((refused as GraphQLError).message).toMatch(/^the recognition subgraph is unavailable: its circuit breaker is open/);
    expect((refused as GraphQLError).extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition', retryAfterSeconds: 4 });
    const metrics = await registry.metrics();
    expect(metrics).toContain('svc_circuit_breaker_state{service="recognition"} 1');
    expect(metrics).toContain('svc_circuit_breaker_rejected_total{service="recognition"} 1');
    now += 4000;
    expect(await registry.metrics()).toContain('svc_circuit_breaker_state{service="recognition"} 2');
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.map(({ level, service, from, to }) => ({ level, service, from, to }))).toEqual([
      { level: 40, service: 'recognition', from: 'closed', to: 'open' },
      { level: 40, service: 'recognition', from: 'open', to: 'halfOpen' },
    ]);
  });

  it('are none when breakers are off', () => {
    const registry = new Registry();
    expect(createBreakerGuards({ settings: { failures: 0, cooldownMs: 1000 }, logger, registry, prefix: 'svc' })('recognition')).toBeUndefined();
    expect(registry.getMetricsAsArray()).toEqual([]);
  });
});

describe('breaker settings', () => {
  it('are read alike by the gateway and every subgraph, with defaults', () => {
    const env = { CIRCUIT_BREAKER_FAILURES: '7', CIRCUIT_BREAKER_COOLDOWN_MS: '2500' };
    expect(readCircuitBreakerSettings({})).toEqual({ failures: 5, cooldownMs: 30_000 });
    expect(readGatewayConfig(env).circuitBreaker).toEqual({ failures: 7, cooldownMs: 2500 });
    expect(readDashboardsConfig(env).circuitBreaker).toEqual({ failures: 7, cooldownMs: 2500 });
    expect(readImportsConfig({ CIRCUIT_BREAKER_FAILURES: '0' }).circuitBreaker).toEqual({ failures: 0, cooldownMs: 30_000 });
  });

  it('refuse a bad value, naming the setting', () => {
    expect(() => readGatewayConfig({ CIRCUIT_BREAKER_FAILURES: '-1' })).toThrow(new ConfigError('CIRCUIT_BREAKER_FAILURES must be a whole number from 0 to 1000; got "-1".'));
    expect(() => readDashboardsConfig({ CIRCUIT_BREAKER_COOLDOWN_MS: 'soon' })).toThrow(/CIRCUIT_BREAKER_COOLDOWN_MS/);
  });
});

describe('a failed root fetch', () => {
  const unreachable = new GraphQLError('the dashboards subgraph is unreachable', { extensions: { code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards' } });

  it('is reported at the path of each root field it asked for, aliases and fragments included', () => {
    const query = 'query Q__dashboards__0 { __typename all: dashboards(first: 1) { totalCount } ...More ... on Query { dashboard(id: "d1") { id } } } fragment More on Query { environments { slug } all: dashboards(first: 1) { totalCount } }';
    const reported = failedRootFetch(unreachable, { query, operationName: 'Q__dashboards__0', path: [] });
    expect(reported.errors.map((error) => error.path)).toEqual([['all'], ['environments'], ['dashboard']]);
    expect(reported.errors[0]!.message).toBe('the dashboards subgraph is unreachable');
    expect(reported.errors[0]!.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards' });
  });

  it('is thrown as it came for an entity fetch, or when it is not a GraphQL error', () => {
    const entities = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Reward { id } } }';
    expect(() => failedRootFetch(unreachable, { query: entities, path: ['redemption', 'reward'] })).toThrow(unreachable);
    const bug = new Error('no query to send');
    expect(() => failedRootFetch(bug, { query: '{ dashboards { totalCount } }', path: [] })).toThrow(bug);
  });
});

describe('a failed single fetch', () => {
  const schema = buildSchema('type Query { dashboards: Int, quota: Int!, environments: [String] }');
  const unreachable = new GraphQLError('the dashboards subgraph is unreachable', { extensions: { code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards' } });

  it('nulls each root field, as Apollo’s executor does, or the whole data when one may not be null', () => {
    expect(failedDirectFetch(unreachable, { operation: '{ a: dashboards environments }' }, schema)).toMatchObject({ data: { a: null, environments: null }, errors: [{ path: ['a'] }, { path: ['environments'] }] });
    expect(failedDirectFetch(unreachable, { operation: '{ dashboards quota }' }, schema).data).toBeNull();
  });
});
