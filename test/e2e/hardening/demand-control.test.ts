import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../../gateway/config.ts';
import { startGateway, type StartedGateway } from '../../../gateway/server.ts';
import { createCallLedger } from '../../../gateway/demandControl.ts';
import { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../../../subgraphs/kit/callScope.ts';
import { startTestStack, type GraphQLResult } from '../../support/stack.ts';
import { startRecognitionEmulator, startRecognitionSubgraph } from '../../support/recognitionPieces.ts';
import { subscribeSse, subscribeWs } from '../../support/subscribers.ts';
import { testLogger } from '../../support/logs.ts';
import { waitUntil } from '../../support/waitFor.ts';

// Aliases, root fields and tokens raised (its 100 ids a field make 55,000 tokens), so that the budget is what refuses the document.
const t = await startTestStack({ MAX_QUERY_ALIASES: '1000', MAX_QUERY_ROOT_FIELDS: '1000', MAX_QUERY_TOKENS: '100000' });
const emulator = t.emulator('recognition');
const member = { 'x-recognition-token': DEMO_TOKENS.member };

const ids = (count: number) => Array.from({ length: count }, (_, index) => `rd_${String(index + 1).padStart(3, '0')}`);
const aliased = (count: number, argument: string) => Array.from({ length: count }, (_, index) => `a${index}: redemptions(ids: ${argument}) { id }`).join(' ');
/** The attack: 500 aliases of 100 ids each, 50,000 upstream calls had it run. */
const ATTACK = `{ ${aliased(500, JSON.stringify(ids(100)))} }`;
/** Eleven aliases over a variable: 11 calls per id. */
const BY_VARIABLE = `query ($ids: [ID!]!) { ${aliased(11, '$ids')} }`;

const tooExpensive = (estimate: number, budget = 1000) => ({
  message: `the operation may make ${estimate} upstream calls; at most ${budget} are allowed`,
  extensions: { code: 'OPERATION_TOO_EXPENSIVE', estimate, budget },
});

async function post(body: unknown): Promise<{ status: number; result: GraphQLResult }> {
  const response = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...member }, body: JSON.stringify(body) });
  return { status: response.status, result: (await response.json()) as GraphQLResult };
}

describe('demand control before execution', () => {
  it('refuses the 500-alias document with its estimate and the budget, before any upstream call (HTTP POST)', async () => {
    await emulator.clearRequests();
    const { status, result } = await post({ query: ATTACK });
    expect(status).toBe(400);
    expect(result).toEqual({ errors: [tooExpensive(50_000)] });
    expect(await emulator.requests()).toEqual([]);
  });

  it('counts list arguments passed as variables, over HTTP GET too', async () => {
    await emulator.clearRequests();
    const url = new URL(t.graphqlUrl);
    url.searchParams.set('query', BY_VARIABLE);
    url.searchParams.set('variables', JSON.stringify({ ids: ids(100) }));
    const response = await fetch(url, { headers: { ...member, 'apollo-require-preflight': 'true' } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ errors: [tooExpensive(1100)] });
    expect(await emulator.requests()).toEqual([]);
  });

  it('refuses a remembered operation on the pass-through when its variables make it too expensive', async () => {
    const cheap = await post({ query: BY_VARIABLE, variables: { ids: ids(2) } });
    expect(cheap.result.errors).toBeUndefined();
    // A repeat with two ids is served by the pass-through: the subgraph is asked once, 2 calls.
    await emulator.clearRequests();
    expect((await post({ query: BY_VARIABLE, variables: { ids: ids(2) } })).result.errors).toBeUndefined();
    expect(await emulator.requests()).toHaveLength(2);
    await emulator.clearRequests();
    const dear = await post({ query: BY_VARIABLE, variables: { ids: ids(100) } });
    expect(dear).toEqual({ status: 400, result: { errors: [tooExpensive(1100)] } });
    expect(await emulator.requests()).toEqual([]);
  });

  it('refuses it over graphql-ws and SSE', async () => {
    await emulator.clearRequests();
    for (const subscription of [
      subscribeWs(t.graphqlUrl, BY_VARIABLE, { variables: { ids: ids(100) }, connectionParams: member }),
      subscribeSse(t.graphqlUrl, BY_VARIABLE, { variables: { ids: ids(100) }, headers: member }),
    ]) {
      expect(await subscription.waitFor(1)).toEqual([{ errors: [tooExpensive(1100)] }]);
      await subscription.ended;
      subscription.close();
    }
    expect(await emulator.requests()).toEqual([]);
  });

  it('multiplies what a list selects by its size: a reward per redemption, a product per question', async () => {
    // 3 ids + 100 rewards (the list's assumed size); 5 question pages + 100 products for first: 100.
    const result = await t.gql('{ redemptions(ids: ["rd_001", "rd_002", "rd_003"]) { reward { name } } questions(platform: "ALPHA", first: 100) { edges { node { product { sku } } } } }', {
      headers: t.stack.demoHeaders,
    });
    expect(result.errors).toBeUndefined();
    // 105 for the questions, and one call for each of 896 root fields.
    const teapots = Array.from({ length: 896 }, (_, index) => `t${index}: teapot`).join(' ');
    const over = await t.gql(`{ questions(platform: "ALPHA", first: 100) { edges { node { product { sku } } } } ${teapots} }`, { headers: t.stack.demoHeaders });
    expect(over).toEqual({ errors: [tooExpensive(1001)] });
  });

  it('holds a marketplace subgraph request to the budget the gateway passes, however its client builds its calls', async () => {
    const marketplace = t.emulator('marketplace');
    const subgraphUrl = t.stack.services.find((service) => service.name === 'marketplace')!.subgraphUrl;
    await marketplace.clearRequests();
    // A page of questions, then a product for each: far more than 2 calls.
    const response = await fetch(subgraphUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.stack.demoHeaders, [CALL_BUDGET_HEADER]: '2' },
      body: JSON.stringify({ query: '{ questions(platform: "ALPHA", first: 20) { edges { node { product { sku } } } } }' }),
    });
    const result = (await response.json()) as GraphQLResult;
    expect(response.headers.get(CALLS_MADE_HEADER)).toBe('2');
    expect(await marketplace.requests()).toHaveLength(2);
    expect(result.errors!.length).toBeGreaterThan(0);
    for (const error of result.errors!) expect(error.extensions).toMatchObject({ code: 'OPERATION_TOO_EXPENSIVE', service: 'marketplace', budget: 2 });
  });
});

/** The recognition slice alone: its emulator, a subgraph with these settings, and gateways over it. */
async function startSlice(subgraphSettings: Parameters<typeof startRecognitionSubgraph>[1], gatewayEnvs: Record<string, string>[]) {
  const upstream = await startRecognitionEmulator();
  const subgraph = await startRecognitionSubgraph(upstream.url, subgraphSettings);
  const gateways = await Promise.all(gatewayEnvs.map((env) => startGateway(readGatewayConfig(env, { port: 0, subgraphUrls: { recognition: subgraph.graphqlUrl } }), testLogger('gateway'))));
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await subgraph.close();
    await upstream.close();
  });
  return { control: upstream.control, subgraph, gateways };
}

// Each subgraph request may make at most 10 upstream calls, retries included.
const counted = await startSlice({ maxRequestUpstreamCalls: 10 }, [{}]);
// A gateway that waits for its client, and one whose subgraph deadline is 300 ms.
const cancelled = await startSlice({}, [{}, { SUBGRAPH_TIMEOUT_MS: '300' }]);

describe('the budget counted while it runs', () => {
  const { control, subgraph } = counted;
  const gateway = counted.gateways[0]!;
  const gql = async (url: string, query: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...member, ...headers }, body: JSON.stringify({ query }) });
    return { headers: response.headers, result: (await response.json()) as GraphQLResult<{ redemptions: unknown[] }> };
  };
  const redemptionCalls = async () => (await control.requests()).filter((request) => request.path.startsWith('/api/v1/redemptions/'));

  it('never lets an upstream answering 503 multiply the calls past the budget: every retry counts', async () => {
    await control.reset();
    await control.fault({ path: '/api/v1/redemptions/*', status: 503 });
    // Eight ids, estimated at 8 calls: retried three times each, they would make 24.
    const { result } = await gql(gateway.graphqlUrl, `{ redemptions(ids: ${JSON.stringify(ids(8))}) { id } }`);
    expect(await redemptionCalls()).toHaveLength(10);
    // Each id fails: with the upstream's 503 where its last retry was refused, else refused by the budget.
    const codes = result.errors!.map((error) => error.extensions?.code);
    expect(codes).toHaveLength(8);
    expect(codes).toContain('OPERATION_TOO_EXPENSIVE');
    for (const code of codes) expect(['OPERATION_TOO_EXPENSIVE', 'UPSTREAM_ERROR']).toContain(code);
  });

  it('takes the budget the gateway passes, and reports the calls it made', async () => {
    await control.reset();
    const { headers, result } = await gql(subgraph.graphqlUrl, `{ redemptions(ids: ${JSON.stringify(ids(8))}) { id } }`, { [CALL_BUDGET_HEADER]: '5' });
    expect(await redemptionCalls()).toHaveLength(5);
    expect(headers.get(CALLS_MADE_HEADER)).toBe('5');
    expect(result.errors!.filter((error) => error.extensions?.code === 'OPERATION_TOO_EXPENSIVE')).toHaveLength(3);
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'OPERATION_TOO_EXPENSIVE', service: 'recognition', budget: 5 });
    // A repeat takes the subgraph's compiled path: the same budget, the same report.
    await control.clearRequests();
    const repeat = await gql(subgraph.graphqlUrl, `{ redemptions(ids: ${JSON.stringify(ids(8))}) { id } }`, { [CALL_BUDGET_HEADER]: '5' });
    expect(await redemptionCalls()).toHaveLength(5);
    expect(repeat.headers.get(CALLS_MADE_HEADER)).toBe('5');
    // A header cannot raise the subgraph's own cap.
    await control.clearRequests();
    await gql(subgraph.graphqlUrl, `{ redemptions(ids: ${JSON.stringify(ids(12))}) { id } }`, { [CALL_BUDGET_HEADER]: '1000' });
    expect(await redemptionCalls()).toHaveLength(10);
  });

  it('holds on the subgraph\'s own WebSocket too: it takes subscriptions only, never a query or a mutation', async () => {
    await control.reset();
    const socketUrl = subgraph.graphqlUrl.replace(/^http/, 'ws');
    for (const query of [`{ redemptions(ids: ${JSON.stringify(ids(12))}) { id } }`, 'mutation { deleteWebhook(id: "wh_001") { success } }']) {
      const outcome = subscribeWs(socketUrl, query, { connectionParams: member });
      const error = (await outcome.ended) as { extensions?: { code?: string }; message?: string }[];
      expect(error).toMatchObject([{ message: expect.stringContaining('subscriptions only'), extensions: { code: 'BAD_REQUEST' } }]);
      outcome.close();
    }
    expect((await control.requests()).filter((request) => !request.path.startsWith('/__emulator'))).toEqual([]);
  });

  it('shares one budget among the subgraph requests of an operation, and never lends what is reserved', () => {
    const ledger = createCallLedger(100, { calls: 40, bySubgraph: new Map([['recognition', 30], ['dashboards', 10]]) });
    expect(ledger.reserve('recognition')).toBe(75);
    expect(ledger.reserve('dashboards')).toBe(25);
    // A second request to a subgraph while the first runs gets nothing; afterwards, what was not spent.
    expect(ledger.reserve('recognition')).toBe(0);
    ledger.settle('recognition', 0, 0);
    ledger.settle('recognition', 75, 70);
    expect(ledger.reserve('recognition')).toBe(5);
    // A subgraph that does not say what it spent has spent everything it held.
    ledger.settle('dashboards', 25, undefined);
    expect(ledger.reserve('dashboards')).toBe(0);
    expect(ledger.reserve('marketplace')).toBe(0);
  });
});

describe('cancellation of upstream work', () => {
  const { control, subgraph } = cancelled;
  const [patient, hasty] = cancelled.gateways as [StartedGateway, StartedGateway];
  const HUNDRED = `{ redemptions(ids: ${JSON.stringify(ids(100))}) { id } }`;
  const send = (url: string, signal?: AbortSignal) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...member }, body: JSON.stringify({ query: HUNDRED }), ...(signal ? { signal } : {}) });
  /** Upstream calls the subgraph saw end in an error (a cancelled call is one). */
  const failedCalls = async () => {
    const metrics = await (await fetch(`${subgraph.url}/metrics`)).text();
    return Number(/^recognition_upstream_calls_total\{[^}]*operation="getRedemption"[^}]*status="error"[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? 0);
  };

  async function expectOnlyTheFirstRound(before: number) {
    // The 32 calls in flight (one loader's concurrency) are cut off; the 68 queued are never made.
    await waitUntil(async () => (await failedCalls()) - before === 32, () => 'the 32 calls in flight to be cancelled');
    expect((await control.requests()).filter((request) => request.path.startsWith('/api/v1/redemptions/'))).toHaveLength(32);
  }

  it('stops when the client goes away: the gateway aborts its subgraph request, the subgraph its upstream calls', async () => {
    await control.reset();
    await control.fault({ path: '/api/v1/redemptions/*', latencyMs: 20_000 });
    const before = await failedCalls();
    const client = new AbortController();
    const answer = send(patient.graphqlUrl, client.signal).catch((error: unknown) => error);
    await waitUntil(async () => (await control.requests()).length === 32, () => '32 redemption calls upstream');
    client.abort();
    expect(await answer).toBeInstanceOf(Error);
    await expectOnlyTheFirstRound(before);
  });

  it.each([
    ['graphql-ws', () => subscribeWs(patient.graphqlUrl, HUNDRED, { connectionParams: member })],
    ['SSE', () => subscribeSse(patient.graphqlUrl, HUNDRED, { headers: member })],
  ])('stops when a query’s %s connection closes, as over HTTP', async (_transport, open) => {
    await control.reset();
    await control.fault({ path: '/api/v1/redemptions/*', latencyMs: 20_000 });
    const before = await failedCalls();
    const query = open();
    await waitUntil(async () => (await control.requests()).length === 32, () => '32 redemption calls upstream');
    query.close();
    await expectOnlyTheFirstRound(before);
  });

  it('stops a query whose graphql-ws client sends `complete`, and the connection goes on serving', async () => {
    await control.reset();
    await control.fault({ path: '/api/v1/redemptions/*', latencyMs: 20_000 });
    const before = await failedCalls();
    const socket = new WebSocket(patient.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const messages: { id?: string; type: string; payload?: unknown }[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: member })));
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as (typeof messages)[number];
        messages.push(message);
        if (message.type === 'connection_ack') resolve();
      });
    });
    try {
      socket.send(JSON.stringify({ id: 'slow', type: 'subscribe', payload: { query: HUNDRED } }));
      await waitUntil(async () => (await control.requests()).length === 32, () => '32 redemption calls upstream');
      socket.send(JSON.stringify({ id: 'slow', type: 'complete' }));
      await expectOnlyTheFirstRound(before);
      // The connection is still open and serves the next operation; the completed one sent nothing.
      await control.reset();
      socket.send(JSON.stringify({ id: 'next', type: 'subscribe', payload: { query: '{ rewardCatalog { name } }' } }));
      await waitUntil(() => messages.some((message) => message.id === 'next' && message.type === 'complete'), () => 'the next operation answered');
      expect(messages.find((message) => message.id === 'next' && message.type === 'next')?.payload).toMatchObject({ data: { rewardCatalog: expect.any(Array) } });
      expect(messages.filter((message) => message.id === 'slow')).toEqual([]);
    } finally {
      socket.close();
    }
  });

  it('stops when the gateway’s deadline passes', async () => {
    await control.reset();
    await control.fault({ path: '/api/v1/redemptions/*', latencyMs: 20_000 });
    const before = await failedCalls();
    const result = (await (await send(hasty.graphqlUrl)).json()) as GraphQLResult;
    expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    await expectOnlyTheFirstRound(before);
  });
});
