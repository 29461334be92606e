import { createServer } from 'node:http';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createRecognitionEmulator } from '../../emulators/recognition/emulator.ts';
import { createDashboardsEmulator } from '../../emulators/dashboards/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { DEMO_TOKEN as DASHBOARDS_TOKEN } from '../../emulators/dashboards/data.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readRecognitionConfig } from '../../subgraphs/recognition/config.ts';
import { createRecognitionSubgraph } from '../../subgraphs/recognition/server.ts';
import { readDashboardsConfig } from '../../subgraphs/dashboards/config.ts';
import { createDashboardsSubgraph } from '../../subgraphs/dashboards/server.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway, type StartedGateway } from '../../gateway/server.ts';
import type { CircuitBreakerSettings } from '../../lib/circuitBreaker.ts';
import type { Started } from '../../lib/http.ts';
import { emulatorControl, type GraphQLResult } from '../support/stack.ts';
import { capturedLogs, testLogger } from '../support/logs.ts';
import { scrapeMetrics } from '../support/metrics.ts';

// Breakers run on clocks this file moves: no test waits for a cool-down to pass.
const subgraphClock = { now: 0 };
const gatewayClock = { now: 0 };
const COOLDOWN_MS = 10_000;
const breakerOn = (clock: { now: number }, failures: number): CircuitBreakerSettings => ({ failures, cooldownMs: COOLDOWN_MS, now: () => clock.now });

const closers: Started[] = [];
afterAll(async () => {
  for (const closer of closers.reverse()) await closer.close();
});
async function started<T extends Started>(server: Promise<T>): Promise<T> {
  const value = await server;
  closers.push(value);
  return value;
}

const recognitionEmulator = await started(startEmulator(createRecognitionEmulator(), 0));
const dashboardsEmulator = await started(startEmulator(createDashboardsEmulator(), 0));
const recognition = emulatorControl(recognitionEmulator.url);
const recognitionConfig = readRecognitionConfig({}, { apiUrl: recognitionEmulator.url, port: 0, circuitBreaker: breakerOn(subgraphClock, 3) });
const recognitionSubgraph = await started(startSubgraph(await createRecognitionSubgraph(recognitionConfig, testLogger('recognition-subgraph')), recognitionConfig));
const dashboardsConfig = readDashboardsConfig({}, { apiUrl: dashboardsEmulator.url, port: 0 });
const dashboardsSubgraph = await started(startSubgraph(createDashboardsSubgraph(dashboardsConfig, testLogger('dashboards-subgraph')), dashboardsConfig));

const headers = { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.member, 'x-dashboards-token': DASHBOARDS_TOKEN };
async function gql(gateway: StartedGateway, query: string): Promise<GraphQLResult> {
  const response = await fetch(gateway.graphqlUrl, { method: 'POST', headers, body: JSON.stringify({ query }) });
  return (await response.json()) as GraphQLResult;
}
const metricsOf = (url: string) => scrapeMetrics(`${url}/metrics`);
const breakerWarnings = () =>
  capturedLogs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('circuit breaker'))
    .map((line) => JSON.parse(line) as { name: string; level: number; service: string; from: string; to: string });

describe('the circuit breaker in front of an upstream service', async () => {
  const gateway = await started(
    startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: `${recognitionSubgraph.url}/graphql`, dashboards: `${dashboardsSubgraph.url}/graphql` } }), testLogger('gateway')),
  );
  const upstreamCalls = async () => (await recognition.requests()).filter((request) => request.path.startsWith('/api/v1/'));

  beforeEach(async () => {
    await recognition.clearRequests();
  });

  it('opens after the run of failures, then fails fast without calling, other services unaffected', async () => {
    // A 500 is not retried: each GraphQL call below is one upstream request.
    await recognition.fault({ path: '/api/v1/rewards/*', method: 'GET', status: 500 });
    for (let i = 0; i < 3; i += 1) {
      const failed = await gql(gateway, '{ reward(id: "rw_coffee_5") { id } }');
      expect(failed.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', status: 500, service: 'recognition' });
    }
    expect(await upstreamCalls()).toHaveLength(3);
    expect(await metricsOf(recognitionSubgraph.url)).toContain('recognition_circuit_breaker_state{service="recognition"} 1');

    // Every call to the service fails fast now, whatever its endpoint, and none reaches it.
    const fast = await gql(gateway, '{ webhooks { id } reward(id: "rw_coffee_5") { id } }');
    expect(fast.data).toEqual({ webhooks: null, reward: null });
    expect(fast.errors).toHaveLength(2);
    for (const error of fast.errors ?? []) {
      expect(error.message).toMatch(/^recognition is unavailable: its circuit breaker is open/);
      expect(error.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition', retryAfterSeconds: 10 });
    }
    // Another service's field in the same operation still has its data.
    const mixed = await gql(gateway, '{ webhooks { id } dashboards(first: 1) { totalCount } }');
    expect(mixed.data?.webhooks).toBeNull();
    expect(mixed.data?.dashboards).toMatchObject({ totalCount: expect.any(Number) });
    expect(mixed.errors?.map((error) => error.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(mixed.errors?.[0]?.path).toEqual(['webhooks']);
    expect(await upstreamCalls()).toHaveLength(3);

    expect(await metricsOf(recognitionSubgraph.url)).toContain('recognition_circuit_breaker_rejected_total{service="recognition"} 3');
    // The subgraph answered (with errors): the gateway's breaker for it stays closed.
    expect(await metricsOf(gateway.url)).toContain('gateway_circuit_breaker_state{service="recognition"} 0');
  });

  it('after the cool-down lets exactly one probe through, concurrent calls fail fast, and a failed probe reopens it', async () => {
    subgraphClock.now += COOLDOWN_MS - 1;
    expect((await gql(gateway, '{ webhooks { id } }')).errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryAfterSeconds: 1 });
    expect(await upstreamCalls()).toHaveLength(0);

    subgraphClock.now += 1;
    expect(await metricsOf(recognitionSubgraph.url)).toContain('recognition_circuit_breaker_state{service="recognition"} 2');
    // Two lookups at once in one subgraph request: the first is the probe (and meets the fault), the second fails fast.
    const both = await gql(gateway, '{ a: reward(id: "rw_coffee_5") { id } b: reward(id: "rw_coffee_10") { id } }');
    expect(await upstreamCalls()).toHaveLength(1);
    expect(both.data).toEqual({ a: null, b: null });
    expect((both.errors ?? []).map((error) => error.extensions?.code).sort()).toEqual(['UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE']);
    expect(await metricsOf(recognitionSubgraph.url)).toContain('recognition_circuit_breaker_state{service="recognition"} 1');

    // Reopened for a whole cool-down.
    subgraphClock.now += COOLDOWN_MS - 1;
    const reopened = await gql(gateway, '{ webhooks { id } }');
    expect(reopened.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryAfterSeconds: 1 });
    expect(await upstreamCalls()).toHaveLength(1);
  });

  it('closes when a probe succeeds: calls reach the service again', async () => {
    await recognition.reset();
    subgraphClock.now += 1;
    const recovered = await gql(gateway, '{ reward(id: "rw_coffee_5") { id } }');
    expect(recovered).toEqual({ data: { reward: { id: 'rw_coffee_5' } } });
    expect(await upstreamCalls()).toHaveLength(1);
    expect(await metricsOf(recognitionSubgraph.url)).toContain('recognition_circuit_breaker_state{service="recognition"} 0');
    expect((await gql(gateway, '{ webhooks { id } }')).errors).toBeUndefined();
    expect(await upstreamCalls()).toHaveLength(2);
  });

  it('is not opened by refusals (4xx, 429): the service answered', async () => {
    await recognition.fault({ path: '/api/v1/webhooks', method: 'GET', status: 429, body: { message: 'slow down' } });
    for (let i = 0; i < 4; i += 1) expect((await gql(gateway, '{ webhooks { id } }')).errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    const refused = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { ...headers, 'x-recognition-token': 'not-a-known-token' }, body: JSON.stringify({ query: '{ hashtagTrends { hashtag } }' }) });
    expect(((await refused.json()) as GraphQLResult).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await upstreamCalls()).toHaveLength(5);
    expect(await metricsOf(recognitionSubgraph.url)).toContain('recognition_circuit_breaker_state{service="recognition"} 0');
    await recognition.reset();
  });

  it('logs each change once at warn with the service, never a URL or a credential', () => {
    const changes = breakerWarnings().filter((line) => line.service === 'recognition');
    expect(changes.map(({ from, to }) => `${from}>${to}`)).toEqual(['closed>open', 'open>halfOpen', 'halfOpen>open', 'open>halfOpen', 'halfOpen>closed']);
    for (const change of changes) expect(change.level).toBe(40);
    const text = capturedLogs.filter((line) => line.includes('circuit breaker')).join('\n');
    expect(text).not.toMatch(/https?:|access_token|\?/);
  });
});

/** A port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the gateway’s circuit breaker in front of a subgraph', async () => {
  const downPort = await freePort();
  const gateway = await started(
    startGateway(
      readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: `${recognitionSubgraph.url}/graphql`, dashboards: `http://127.0.0.1:${downPort}/graphql` }, circuitBreaker: breakerOn(gatewayClock, 2) }),
      testLogger('gateway-breaker'),
    ),
  );
  // The same gateway without its fast paths: Apollo's executor answers every operation.
  const apolloOnly = await started(
    startGateway(
      readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: `${recognitionSubgraph.url}/graphql`, dashboards: `http://127.0.0.1:${downPort}/graphql` }, circuitBreaker: breakerOn(gatewayClock, 2), fastPaths: { singleFetch: false, passThrough: false } }),
      testLogger('gateway-apollo-only'),
    ),
  );

  it('fails fast for that subgraph once it keeps refusing connections; other subgraphs still answer', async () => {
    for (let i = 0; i < 2; i += 1) {
      const result = await gql(gateway, '{ webhooks { id } dashboards(first: 1) { totalCount } }');
      expect(result.data?.webhooks).toEqual(expect.any(Array));
      expect(result.data?.dashboards).toBeNull();
      expect(result.errors).toHaveLength(1);
      expect(result.errors?.[0]).toMatchObject({ message: 'the dashboards subgraph is unreachable', path: ['dashboards'], extensions: { code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards' } });
    }
    const fast = await gql(gateway, '{ webhooks { id } dashboards(first: 1) { totalCount } }');
    expect(fast.data?.webhooks).toEqual(expect.any(Array));
    expect(fast.data?.dashboards).toBeNull();
    expect(fast.errors).toHaveLength(1);
    expect(fast.errors?.[0]?.message).toMatch(/^the dashboards subgraph is unavailable: its circuit breaker is open/);
    expect(fast.errors?.[0]?.path).toEqual(['dashboards']);
    expect(fast.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards', retryAfterSeconds: 10 });
    const metrics = await metricsOf(gateway.url);
    expect(metrics).toContain('gateway_circuit_breaker_state{service="dashboards"} 1');
    expect(metrics).toContain('gateway_circuit_breaker_state{service="recognition"} 0');
    expect(metrics).toContain('gateway_circuit_breaker_rejected_total{service="dashboards"} 1');
  });

  it('is respected by the fast paths: a one-subgraph operation and its repeats fail fast too, answered as Apollo’s executor answers', async () => {
    const viaApollo: GraphQLResult[] = [];
    for (let i = 0; i < 3; i += 1) viaApollo.push(await gql(apolloOnly, '{ dashboards(first: 1) { totalCount } }'));
    expect(viaApollo[0]).toEqual({
      data: { dashboards: null },
      errors: [{ message: 'the dashboards subgraph is unreachable', path: ['dashboards'], extensions: { code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards', serviceName: 'dashboards' } }],
    });
    const refused = viaApollo[2]!;
    expect(refused.data).toEqual({ dashboards: null });
    expect(refused.errors?.[0]?.message).toMatch(/circuit breaker is open/);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'dashboards', retryAfterSeconds: 10 });
    // The first goes through Apollo Server and the single-fetch shortcut, the repeats through the pass-through.
    for (let i = 0; i < 3; i += 1) expect(await gql(gateway, '{ dashboards(first: 1) { totalCount } }')).toEqual(refused);
    expect(await metricsOf(gateway.url)).toContain('gateway_circuit_breaker_rejected_total{service="dashboards"} 4');
  });

  it('lets one probe through after the cool-down and closes when the subgraph is back', async () => {
    const back = await started(startSubgraph(createDashboardsSubgraph({ ...dashboardsConfig, port: downPort }, testLogger('dashboards-back')), { ...dashboardsConfig, port: downPort }));
    expect(back.url).toContain(String(downPort));
    expect((await gql(gateway, '{ dashboards(first: 1) { totalCount } }')).errors?.[0]?.message).toMatch(/circuit breaker is open/);
    gatewayClock.now += COOLDOWN_MS;
    const probed = await gql(gateway, '{ webhooks { id } dashboards(first: 1) { totalCount } }');
    expect(probed.errors).toBeUndefined();
    expect(probed.data?.dashboards).toMatchObject({ totalCount: expect.any(Number) });
    expect(await metricsOf(gateway.url)).toContain('gateway_circuit_breaker_state{service="dashboards"} 0');
    const changes = breakerWarnings().filter((line) => line.name === 'gateway-breaker' && line.service === 'dashboards');
    expect(changes.map(({ from, to }) => `${from}>${to}`)).toEqual(['closed>open', 'open>halfOpen', 'halfOpen>closed']);
  });
});
