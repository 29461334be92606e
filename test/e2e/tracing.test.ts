import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { closeAfterFile } from '../support/afterFile.ts';
import { spawnMain } from '../support/mainProcess.ts';
import { emulatorControl, type GraphQLResult } from '../support/stack.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';
import { subscribeMultipart, subscribeSse, subscribeWs } from '../support/subscribers.ts';
import { MAX_RESOLVER_SPANS } from '../../subgraphs/kit/tracing.ts';
import { attributeOf, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlpReceiver.ts';

/**
 * Traces as an operator runs them: the emulator, the recognition subgraph and two gateways each
 * in its own process (tracing is registered once per process), pointed by the standard `OTEL_*`
 * variables at an in-process OTLP/HTTP receiver. Spans are only sent when each process stops on
 * SIGTERM (the export delay is an hour), so what arrives also proves the flush on shutdown.
 */

const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, CONSUMER: 5 } as const;

interface Main {
  url: string;
  stop(): Promise<[number | null, NodeJS.Signals | null]>;
}

const running: Main[] = [];
afterAll(async () => {
  for (const main of running.splice(0)) await main.stop();
});

/** A process's own main, started as in production, resolved once it prints the URL it listens on. */
async function startMain(entry: string, env: Record<string, string>, listening: RegExp): Promise<Main> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const { child, output } = spawnMain(['--import', 'tsx', entry], { ...inherited, LOG_LEVEL: 'warn', ...env });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  await waitUntil(() => listening.test(output()) || child.exitCode !== null, () => `${entry} to start (${output()})`, 60_000);
  const url = listening.exec(output())?.[1];
  if (!url) throw new Error(`${entry} did not start: ${output()}`);
  let stopped: Promise<[number | null, NodeJS.Signals | null]> | undefined;
  const main: Main = {
    url,
    stop() {
      if (!stopped) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        stopped = exited;
      }
      return stopped;
    },
  };
  running.push(main);
  return main;
}

let emulatorUrl: string;
beforeAll(async () => {
  // Emulators stand in for third-party services: they make no spans, and stop by the signal.
  emulatorUrl = (await startMain('emulators/recognition/main.ts', { RECOGNITION_EMULATOR_PORT: '0' }, /emulator on (\S+)\/api\/v1/)).url;
}, 60_000);

const otelEnv = (receiver: OtlpReceiver, extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  // Nothing is exported on a timer during the test: only the flush on SIGTERM sends spans.
  OTEL_BSP_SCHEDULE_DELAY: '3600000',
  ...extra,
});

/** A client's W3C trace context, with a fresh trace id. */
function clientTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const QUERY = 'query Redeemed($id: ID!) { redemption(id: $id) { state reward { name } } }';
const REDEMPTION_ID = 'rd_001';

async function ask(graphqlUrl: string, traceparent: string): Promise<GraphQLResult> {
  const response = await fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.admin, traceparent },
    body: JSON.stringify({ query: QUERY, variables: { id: REDEMPTION_ID }, operationName: 'Redeemed' }),
  });
  return (await response.json()) as GraphQLResult;
}

function only(spans: ReceivedSpan[], description: string, match: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  expect(found.map((span) => span.name), description).toHaveLength(1);
  return found[0]!;
}

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);

describe('traces, with the OTLP settings', () => {
  let receiver: OtlpReceiver;
  const traces = { singleFetch: clientTrace(), passThrough: clientTrace(), apollo: clientTrace(), retried: clientTrace(), failed: clientTrace(), many: clientTrace(), subscribed: clientTrace(), overSse: clientTrace(), refused: clientTrace(), overMultipart: clientTrace(), download: clientTrace() };
  const DOWNLOAD_ID = randomBytes(16).toString('hex');
  let downloadStatus = 0;
  let bonusId = '';
  let upstreamPaths: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    closeAfterFile(() => receiver.close());
    knownSecrets.add(DEMO_TOKENS.admin);
    // It registers its webhook at start, so that the emulator's bonuses become subscription events.
    const subgraph = await startMain(
      'subgraphs/recognition/main.ts',
      { RECOGNITION_SUBGRAPH_PORT: '0', RECOGNITION_API_URL: emulatorUrl, RECOGNITION_PUBLIC_URL: 'self', RECOGNITION_SERVICE_TOKEN: DEMO_TOKENS.admin, SUBGRAPH_DRAIN_DELAY_MS: '0', ...otelEnv(receiver) },
      /subgraph on (\S+)/,
    );
    // Its download links, through the gateway.
    const marketplaceEmulator = await startMain('emulators/marketplace/main.ts', { MARKETPLACE_EMULATOR_PORT: '0' }, /emulator on (\S+) for/);
    const marketplace = await startMain(
      'subgraphs/marketplace/main.ts',
      { MARKETPLACE_SUBGRAPH_PORT: '0', MARKETPLACE_API_URL: marketplaceEmulator.url, SUBGRAPH_DRAIN_DELAY_MS: '0', ...otelEnv(receiver) },
      /subgraph on (\S+)/,
    );
    const gatewayEnv = { RECOGNITION_SUBGRAPH_URL: subgraph.url, MARKETPLACE_SUBGRAPH_URL: marketplace.url, GATEWAY_PORT: '0', GATEWAY_DRAIN_DELAY_MS: '0', GATEWAY_SHUTDOWN_GRACE_MS: '5000' };
    const [fastPaths, apolloOnly] = await Promise.all([
      startMain('gateway/main.ts', { ...gatewayEnv, ...otelEnv(receiver) }, /gateway on (\S+)/),
      // Apollo's executor for every plan: its own spans, under the request's.
      startMain('gateway/main.ts', { ...gatewayEnv, GATEWAY_SINGLE_FETCH: 'off', ...otelEnv(receiver, { OTEL_SERVICE_NAME: 'gateway-apollo' }) }, /gateway on (\S+)/),
    ]);
    const control = emulatorControl(emulatorUrl);

    // A subscription over graphql-ws, its client's trace context in connectionParams, and one event.
    const subscription = subscribeWs(fastPaths.url, 'subscription Gifts { bonusCreated { bonus { id hashtag } } }', {
      connectionParams: { 'x-recognition-token': DEMO_TOKENS.admin, traceparent: traces.subscribed.traceparent },
    });
    await waitForEventSubscriptions(subgraph.url, 1);
    bonusId = ((await control.control('bonuses', { hashtag: 'traced' })) as { bonus: { id: string } }).bonus.id;
    expect(await subscription.waitFor(1)).toEqual([{ data: { bonusCreated: { bonus: { id: bonusId, hashtag: '#traced' } } } }]);
    subscription.close();
    // One refused: no credential.
    const refused = subscribeWs(fastPaths.url, 'subscription { bonusCreated { bonus { id } } }', { connectionParams: { traceparent: traces.refused.traceparent } });
    await refused.ended;
    expect(refused.results).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] }]);
    refused.close();
    // One over multipart HTTP, refused too, its trace context in the request's headers.
    const overMultipart = subscribeMultipart(fastPaths.url, 'subscription Streamed { bonusCreated { bonus { id } } }', { headers: { traceparent: traces.overMultipart.traceparent } });
    await overMultipart.ended;
    expect(overMultipart.results).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] }]);
    // A query over SSE, its trace context in the request's headers.
    const overSse = subscribeSse(fastPaths.url, QUERY, { variables: { id: REDEMPTION_ID }, headers: { 'x-recognition-token': DEMO_TOKENS.admin, traceparent: traces.overSse.traceparent } });
    expect((await overSse.waitFor(1))[0]?.data).toEqual({ redemption: { state: expect.any(String), reward: { name: expect.any(String) } } });
    overSse.close();
    await control.reset();
    // A download link that has expired (or never was): the gateway's span and the subgraph's.
    const download = await fetch(`${new URL(fastPaths.url).origin}/downloads/marketplace/${DOWNLOAD_ID}`, { headers: { traceparent: traces.download.traceparent } });
    downloadStatus = download.status;
    await download.arrayBuffer();

    // The first time through Apollo Server and the single-fetch executor; the repeat through the pass-through.
    for (const trace of [traces.singleFetch, traces.passThrough]) {
      expect(await ask(fastPaths.url, trace.traceparent)).toEqual({ data: { redemption: { state: expect.any(String), reward: { name: expect.any(String) } } } });
    }
    expect((await ask(apolloOnly.url, traces.apollo.traceparent)).data).toEqual({ redemption: { state: expect.any(String), reward: { name: expect.any(String) } } });
    // 1 root field and 300 field resolvers: more than a request may trace.
    const many = await fetch(fastPaths.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': DEMO_TOKENS.admin, traceparent: traces.many.traceparent },
      body: JSON.stringify({ query: 'query Many($ids: [ID!]!) { redemptions(ids: $ids) { createdAt certificateUrl claimUrl } }', variables: { ids: Array.from({ length: 100 }, () => REDEMPTION_ID) } }),
    });
    expect(((await many.json()) as GraphQLResult<{ redemptions: unknown[] }>).data?.redemptions).toHaveLength(100);
    // A read retried once after a 503, then one that fails every attempt.
    await control.fault({ path: '/api/v1/redemptions/*', status: 503, times: 1 });
    expect((await ask(fastPaths.url, traces.retried.traceparent)).data).toEqual({ redemption: { state: expect.any(String), reward: { name: expect.any(String) } } });
    await control.fault({ path: '/api/v1/redemptions/*', status: 500, body: { message: `no ${REDEMPTION_ID} for ${DEMO_TOKENS.admin}` } });
    const failed = await ask(fastPaths.url, traces.failed.traceparent);
    expect(failed.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    upstreamPaths = (await control.requests()).map((request) => request.path);
    await control.reset();


    // Each process sends its spans as it stops.
    for (const main of [fastPaths, apolloOnly, subgraph, marketplace]) expect(await main.stop()).toEqual([0, null]);
  }, 120_000);

  it('continue the client’s trace through the gateway, the fast paths’ fetch, the subgraph, its resolvers and each upstream call', () => {
    const spans = receiver.spans().filter((span) => span.traceId === traces.singleFetch.traceId);
    const request = only(spans, 'the gateway request', (span) => span.service === 'gateway' && span.kind === SPAN_KIND.SERVER);
    expect(request).toMatchObject({ name: 'POST /graphql', parentSpanId: traces.singleFetch.spanId });
    expect(attributeOf(request, 'http.response.status_code')).toBe(200);
    expect(attributeOf(request, 'graphql.operation.name')).toBe('Redeemed');
    expect(attributeOf(request, 'graphql.operation.type')).toBe('query');

    const fetch = only(childrenOf(spans, request), 'the subgraph fetch', (span) => span.name === 'gateway.fetch');
    expect(attributeOf(fetch, 'service')).toBe('recognition');
    expect(attributeOf(fetch, 'gateway.fast_path')).toBe('single-fetch');

    const served = only(childrenOf(spans, fetch), 'the subgraph request', (span) => span.kind === SPAN_KIND.SERVER);
    expect(served).toMatchObject({ name: 'POST /graphql', service: 'recognition-subgraph' });

    const rootField = only(childrenOf(spans, served), 'the root field', (span) => span.name === 'Query.redemption');
    const redemptionCall = only(childrenOf(spans, rootField), 'the redemption call', (span) => span.kind === SPAN_KIND.CLIENT);
    expect(redemptionCall.name).toBe('GET /api/v1/redemptions/{id}');
    expect(attributeOf(redemptionCall, 'url.template')).toBe('/api/v1/redemptions/{id}');
    expect(attributeOf(redemptionCall, 'http.request.method')).toBe('GET');
    expect(attributeOf(redemptionCall, 'http.response.status_code')).toBe(200);
    expect(attributeOf(redemptionCall, 'peer.service')).toBe('recognition');
    expect(attributeOf(redemptionCall, 'upstream.operation')).toBe('getRedemption');

    const rewardField = only(spans, 'the reward field', (span) => span.name === 'Redemption.reward');
    expect(rewardField.service).toBe('recognition-subgraph');
    const rewardCall = only(childrenOf(spans, rewardField), 'the reward call', (span) => span.kind === SPAN_KIND.CLIENT);
    expect(rewardCall.name).toBe('GET /api/v1/rewards/{id}');
    expect(attributeOf(rewardCall, 'http.response.status_code')).toBe(200);
    // Properties read without a resolver function make no span.
    expect(spans.filter((span) => span.name === 'Redemption.state' || span.name === 'Reward.name')).toEqual([]);
  });

  it('make the pass-through’s fetch span too, and keep Apollo Gateway’s own spans on its executor', () => {
    const repeat = receiver.spans().filter((span) => span.traceId === traces.passThrough.traceId);
    const request = only(repeat, 'the repeat’s request', (span) => span.service === 'gateway' && span.kind === SPAN_KIND.SERVER);
    const fetch = only(childrenOf(repeat, request), 'its fetch', (span) => span.name === 'gateway.fetch');
    expect(attributeOf(fetch, 'gateway.fast_path')).toBe('pass-through');
    expect(attributeOf(request, 'graphql.operation.name')).toBe('Redeemed');
    const served = only(childrenOf(repeat, fetch), 'the subgraph request', (span) => span.kind === SPAN_KIND.SERVER);
    // The subgraph serves the repeat compiled, without Apollo Server: the same resolver spans.
    const rootField = only(childrenOf(repeat, served), 'the root field', (span) => span.name === 'Query.redemption');
    expect(childrenOf(repeat, rootField).map((span) => span.name)).toEqual(['GET /api/v1/redemptions/{id}']);

    const apollo = receiver.spans().filter((span) => span.traceId === traces.apollo.traceId);
    const apolloRequest = only(apollo, 'the request', (span) => span.service === 'gateway-apollo' && span.kind === SPAN_KIND.SERVER);
    expect(apolloRequest.parentSpanId).toBe(traces.apollo.spanId);
    const operation = only(childrenOf(apollo, apolloRequest), 'Apollo’s request span', (span) => span.name === 'gateway.request');
    expect(apollo.map((span) => span.name)).toEqual(expect.arrayContaining(['gateway.plan', 'gateway.execute', 'gateway.fetch']));
    const apolloFetch = only(apollo, 'Apollo’s fetch', (span) => span.name === 'gateway.fetch');
    let ancestor: ReceivedSpan | undefined = apolloFetch;
    while (ancestor && ancestor !== operation) ancestor = apollo.find((span) => span.spanId === ancestor!.parentSpanId);
    expect(ancestor, 'gateway.fetch under gateway.request').toBe(operation);
    const apolloServed = only(childrenOf(apollo, apolloFetch), 'the subgraph request', (span) => span.kind === SPAN_KIND.SERVER);
    expect(apolloServed.service).toBe('recognition-subgraph');
  });

  it('record retries as events of one call span, and failures by status and code', () => {
    const retried = receiver.spans().filter((span) => span.traceId === traces.retried.traceId);
    const call = only(retried, 'the retried call', (span) => span.name === 'GET /api/v1/redemptions/{id}');
    expect(attributeOf(call, 'http.response.status_code')).toBe(200);
    expect(attributeOf(call, 'http.request.resend_count')).toBe(1);
    expect(call.events?.filter((event) => event.name === 'upstream.attempt').map((event) => attributeOf(event, 'http.response.status_code'))).toEqual([503, 200]);

    const failed = receiver.spans().filter((span) => span.traceId === traces.failed.traceId);
    const failedCall = only(failed, 'the failed call', (span) => span.name === 'GET /api/v1/redemptions/{id}');
    expect(attributeOf(failedCall, 'http.response.status_code')).toBe(500);
    expect(attributeOf(failedCall, 'error.type')).toBe('UPSTREAM_ERROR');
    expect(failedCall.status).toMatchObject({ code: 2, message: 'UPSTREAM_ERROR' });
    const field = only(failed, 'the failed field', (span) => span.name === 'Query.redemption');
    expect(attributeOf(field, 'error.type')).toBe('UPSTREAM_ERROR');
    expect(field.events).toEqual([{ name: 'exception', attributes: [{ key: 'exception.type', value: { stringValue: 'UPSTREAM_ERROR' } }], timeUnixNano: expect.anything(), droppedAttributesCount: 0 }]);
  });

  it('trace an operation over WebSocket, SSE or multipart HTTP as over HTTP, and each subscription event in a trace of its own, linked to its subscription and to the webhook that brought it in', () => {
    const all = receiver.spans();
    const subscribed = all.filter((span) => span.traceId === traces.subscribed.traceId);
    const subscribe = only(subscribed, 'the subscription over graphql-ws', (span) => span.service === 'gateway' && span.name === 'GraphQL subscription');
    expect(subscribe.kind).toBe(SPAN_KIND.SERVER);
    expect(subscribe.parentSpanId).toBe(traces.subscribed.spanId);
    expect([attributeOf(subscribe, 'graphql.transport'), attributeOf(subscribe, 'graphql.operation.type'), attributeOf(subscribe, 'graphql.operation.name')]).toEqual(['ws', 'subscription', 'Gifts']);
    expect(subscribe.status?.code ?? 0).not.toBe(2);

    const refused = only(all.filter((span) => span.traceId === traces.refused.traceId), 'the refused subscription', (span) => span.name === 'GraphQL subscription');
    expect([attributeOf(refused, 'error.type'), refused.status?.code]).toEqual(['UNAUTHENTICATED', 2]);
    const overMultipart = only(all.filter((span) => span.traceId === traces.overMultipart.traceId), 'the subscription over multipart HTTP', (span) => span.name === 'GraphQL subscription');
    expect([overMultipart.parentSpanId, attributeOf(overMultipart, 'graphql.transport'), attributeOf(overMultipart, 'graphql.operation.name'), attributeOf(overMultipart, 'error.type')]).toEqual([traces.overMultipart.spanId, 'multipart', 'Streamed', 'UNAUTHENTICATED']);

    // The emulator's webhook for the bonus: a trace of the subgraph's own.
    const delivery = only(all, 'the webhook delivery', (span) => span.service === 'recognition-subgraph' && span.kind === SPAN_KIND.SERVER && span.name === 'POST /webhooks/recognition/*');
    const event = only(all, 'the event', (span) => span.name === 'GraphQL subscription event');
    expect(event).toMatchObject({
      service: 'gateway',
      kind: SPAN_KIND.CONSUMER,
      links: [expect.objectContaining({ traceId: traces.subscribed.traceId, spanId: subscribe.spanId }), expect.objectContaining({ traceId: delivery.traceId, spanId: delivery.spanId })],
    });
    expect(event.traceId).not.toBe(traces.subscribed.traceId);
    expect(event.parentSpanId ?? '').toBe('');
    expect([attributeOf(event, 'subscription.subscribers'), attributeOf(event, 'graphql.operation.name'), attributeOf(event, 'error.type')]).toEqual([1, 'Gifts', undefined]);
    // Apollo's executor runs the event's plan inside it.
    expect(childrenOf(all, event).map((span) => span.name)).toContain('gateway.execute');

    const overSse = all.filter((span) => span.traceId === traces.overSse.traceId);
    const query = only(overSse, 'the query over SSE', (span) => span.service === 'gateway' && span.name === 'GraphQL query');
    expect(query.parentSpanId).toBe(traces.overSse.spanId);
    expect([attributeOf(query, 'graphql.transport'), attributeOf(query, 'graphql.operation.name')]).toEqual(['sse', 'Redeemed']);
    // The subgraph continues it, as it does a query over HTTP.
    expect(overSse.some((span) => span.service === 'recognition-subgraph' && span.kind === SPAN_KIND.SERVER)).toBe(true);
  });

  it('trace a download link through the gateway into the subgraph that serves it, named by the route', () => {
    expect(downloadStatus).toBe(404);
    const spans = receiver.spans().filter((span) => span.traceId === traces.download.traceId);
    const atGateway = only(spans, 'the gateway’s download', (span) => span.service === 'gateway');
    expect(atGateway).toMatchObject({ name: 'GET /downloads/*', kind: SPAN_KIND.SERVER, parentSpanId: traces.download.spanId });
    expect(attributeOf(atGateway, 'http.response.status_code')).toBe(404);
    const atSubgraph = only(spans, 'the subgraph’s download', (span) => span.service === 'marketplace-subgraph');
    expect(atSubgraph).toMatchObject({ name: 'GET /downloads/*', kind: SPAN_KIND.SERVER, parentSpanId: atGateway.spanId });
  });

  it('stop making resolver spans past the bound of one request, and count the rest', () => {
    const spans = receiver.spans().filter((span) => span.traceId === traces.many.traceId);
    const served = only(spans, 'the subgraph request', (span) => span.service === 'recognition-subgraph' && span.kind === SPAN_KIND.SERVER);
    expect(spans.filter((span) => span.parentSpanId === served.spanId && span.kind === SPAN_KIND.INTERNAL)).toHaveLength(MAX_RESOLVER_SPANS);
    expect(attributeOf(served, 'graphql.resolver_spans.untraced')).toBe(301 - MAX_RESOLVER_SPANS);
  });

  it('never hold a credential, a variable’s value, an id from a path, a query string or the operation’s text', () => {
    const everything = receiver.bodies.join('\n');
    expect(everything.length).toBeGreaterThan(0);
    // The ids the upstream calls carried in their paths (the redemption's, its reward's).
    const pathIds = upstreamPaths.map((path) => /^\/api\/v1\/(?:redemptions|rewards)\/([^/?]+)/.exec(path)?.[1]).filter((id): id is string => Boolean(id));
    expect(pathIds).toContain(REDEMPTION_ID);
    for (const secret of [...Object.values(DEMO_TOKENS), ...pathIds, DOWNLOAD_ID, 'access_token', 'redemption(id', '?']) {
      expect(everything.includes(secret), `the spans hold ${secret.startsWith('demo-') ? 'a credential' : JSON.stringify(secret)}`).toBe(false);
    }
  });
});

describe('traces, without the OTLP settings', () => {
  it('are never sent when OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none says so, though an endpoint is set', async () => {
    const receiver = await startOtlpReceiver();
    closeAfterFile(() => receiver.close());
    const subgraph = await startMain('subgraphs/recognition/main.ts', { RECOGNITION_SUBGRAPH_PORT: '0', RECOGNITION_API_URL: emulatorUrl, SUBGRAPH_DRAIN_DELAY_MS: '0', ...otelEnv(receiver, { OTEL_TRACES_EXPORTER: 'none' }) }, /subgraph on (\S+)/);
    const gateway = await startMain('gateway/main.ts', { RECOGNITION_SUBGRAPH_URL: subgraph.url, GATEWAY_PORT: '0', GATEWAY_DRAIN_DELAY_MS: '0', ...otelEnv(receiver, { OTEL_SDK_DISABLED: 'TRUE' }) }, /gateway on (\S+)/);
    for (const trace of [clientTrace(), clientTrace()]) {
      expect((await ask(gateway.url, trace.traceparent)).data).toEqual({ redemption: { state: expect.any(String), reward: { name: expect.any(String) } } });
    }
    for (const main of [gateway, subgraph]) expect(await main.stop()).toEqual([0, null]);
    expect(receiver.requests).toBe(0);
  }, 120_000);
});
