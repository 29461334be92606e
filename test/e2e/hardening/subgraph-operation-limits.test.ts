import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../../gateway/config.ts';
import { startGateway } from '../../../gateway/server.ts';
import { SUBGRAPH_OPERATION_LIMITS } from '../../../lib/operationShapeLimits.ts';
import { FrameReader, READ_BATCH_HEADER } from '../../../lib/readBatch.ts';
import { closeAfterFile } from '../../support/afterFile.ts';
import { composeWithKudos, startKudosSubgraph } from '../../support/kudosSubgraph.ts';
import { testLogger } from '../../support/logs.ts';
import { manyOperations, measureOf, queryAtGatewayLimits, subscriptionAtGatewayLimits, TOKEN_PROBES } from '../../support/operationsAtLimits.ts';
import { startTestStack, type GraphQLResult } from '../../support/stack.ts';
import { subscribeWs } from '../../support/subscribers.ts';
import { waitForEventSubscriptions } from '../../support/waitFor.ts';

const t = await startTestStack();
const subgraphUrlOf = (name: string) => t.stack.services.find((service) => service.name === name)!.subgraphUrl;
const recognitionUrl = subgraphUrlOf('recognition');
const recognition = t.emulator('recognition');
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const { maxDepth, maxFields, maxAliases, maxRootFields, maxTokens, maxDefinitions } = SUBGRAPH_OPERATION_LIMITS;

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...member, ...headers }, body: JSON.stringify(body) });
const messages = (result: GraphQLResult) => result.errors?.map((error) => error.message);
const codes = (result: GraphQLResult) => new Set(result.errors?.map((error) => error.extensions?.code));
/** What the services were asked, the emulators' own control calls aside. */
const upstreamCalls = async (emulator = recognition) => (await emulator.requests()).filter((request) => !request.path.startsWith('/__emulator'));

/** Aliases of a field that calls the service each time it runs. */
const teapots = (count: number) => Array.from({ length: count }, (_, index) => `t${index}: teapot`).join(' ');
/**
 * The QA probe's document, 55,000 aliases of `__typename` (about 1 MB), cut to 25,000 to stay within
 * the token bound (75,000 of 80,000), past which the parse refuses it; with a field no rule but the
 * limits' looks at.
 */
const PROBE = `{ noSuchField ${Array.from({ length: 25_000 }, (_, index) => `a${index}:__typename`).join(' ')} }`;
/** How graphql-js words a document stopped at `count` tokens (16 writes "more that"). */
const tooManyTokens = (count: number) => new RegExp(`^Syntax Error: Document contains more tha[nt] ${count} tokens\\. Parsing aborted\\.$`);
/** A subscription document of `count` operations, eight tokens each. */
const manySubscriptions = (count: number) => manyOperations(count, 'subscription', 'bonusCreated { id }');
/** What a graphql-ws subscription received and how it ended, within 5 s. */
async function wsOutcome(url: string, query: string): Promise<string> {
  const subscription = subscribeWs(url, query, { connectionParams: member });
  const ended = await Promise.race([subscription.ended, new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
  subscription.close();
  return `${JSON.stringify(subscription.results)} ${ended instanceof Error ? ended.message : JSON.stringify(ended)}`;
}

/** Whether the subgraph at `url` refuses an operation one field past its bound, with the typed error. */
async function refusesPastItsLimits(url: string): Promise<boolean> {
  const fields = Array.from({ length: maxFields + 1 }, (_, index) => `f${index}: __typename`).join(' ');
  const result = (await (await post(url, { query: `{ ${fields} }` })).json()) as GraphQLResult;
  return result.data === undefined && (messages(result) ?? []).includes(`the operation selects more than ${maxFields} fields`);
}

describe('a subgraph reached without the gateway', () => {
  it('refuses an operation past its shape limits with GRAPHQL_VALIDATION_FAILED, before any upstream call', async () => {
    await recognition.clearRequests();
    const wide = await post(recognitionUrl, { query: `{ ${teapots(maxRootFields + 1)} }` });
    expect(wide.status).toBe(400);
    const result = (await wide.json()) as GraphQLResult;
    expect(result.data).toBeUndefined();
    expect(result.errors).toEqual([expect.objectContaining({ message: `the operation selects more than ${maxRootFields} root fields`, extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
    expect(await upstreamCalls()).toEqual([]);

    // Depth, on the dashboards subgraph, whose dashboards and widgets lead to each other.
    const dashboards = t.emulator('dashboards');
    await dashboards.clearRequests();
    let inner = 'id';
    for (let level = maxDepth; level >= 2; level -= 1) inner = `${level % 2 === 0 ? 'widget(id: "w")' : 'dashboard'} { ${inner} }`;
    const deep = `{ dashboard(id: "d") { ${inner} } }`;
    expect(measureOf(deep).depth).toBe(maxDepth + 1);
    const tooDeep = (await (await post(subgraphUrlOf('dashboards'), { query: deep }, t.stack.demoHeaders)).json()) as GraphQLResult;
    expect(messages(tooDeep)).toEqual([`the operation nests ${maxDepth + 1} levels deep; at most ${maxDepth} are allowed`]);
    expect(await upstreamCalls(dashboards)).toEqual([]);
  });

  it("refuses the QA probe's 55,000 aliases quickly, without graphql-js's other rules walking it", async () => {
    const elapsed: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const started = performance.now();
      const response = await post(recognitionUrl, { query: PROBE });
      const result = (await response.json()) as GraphQLResult;
      elapsed.push(performance.now() - started);
      expect(response.status).toBe(400);
      // Only the limits' errors: "Cannot query field" would mean every rule walked the 55,000 fields.
      expect(messages(result)).toEqual([`the operation selects more than ${maxFields} fields`, `the operation uses more than ${maxAliases} aliases`, `the operation selects more than ${maxRootFields} root fields`]);
      expect(codes(result)).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
    }
    // Run, 55,000 took 310 to 700 ms each time; refused, about 70 ms, most of it parsing. The bound
    // leaves room for a busy machine: the messages above are what prove nothing else walked it.
    expect(Math.min(...elapsed)).toBeLessThan(1000);
  });

  it('refuses it inside a batch of reads, and answers the read beside it', async () => {
    await recognition.clearRequests();
    const response = await post(recognitionUrl, [{ query: `{ ${teapots(maxAliases + 1)} }` }, { query: '{ __typename }' }], { [READ_BATCH_HEADER]: '-,-' });
    expect(response.status).toBe(200);
    const reader = new FrameReader(2, 1024 * 1024);
    const frames = Object.fromEntries(reader.push(Buffer.from(await response.arrayBuffer())).map((frame) => [frame.index, frame]));
    expect(frames[0]!.status).toBe(400);
    const refused = JSON.parse(frames[0]!.body.toString('utf8')) as GraphQLResult;
    expect(refused.errors).toEqual([
      expect.objectContaining({ message: `the operation uses more than ${maxAliases} aliases`, extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) }),
      expect.objectContaining({ message: `the operation selects more than ${maxRootFields} root fields` }),
    ]);
    expect(frames[0]!.headers['x-upstream-calls']).toBe('0');
    expect(JSON.parse(frames[1]!.body.toString('utf8'))).toEqual({ data: { __typename: 'Query' } });
    expect(await upstreamCalls()).toEqual([]);
  });

  it('refuses a subscription past its limits on its WebSocket', async () => {
    const aliases = Array.from({ length: maxAliases + 1 }, (_, index) => `i${index}: id`).join(' ');
    const subscription = subscribeWs(recognitionUrl, `subscription { bonusCreated { ${aliases} } }`, { connectionParams: member });
    const ended = await Promise.race([subscription.ended, new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
    subscription.close();
    // graphql-ws reports validation errors as its error message.
    const seen = `${JSON.stringify(subscription.results)} ${ended instanceof Error ? ended.message : JSON.stringify(ended)}`;
    expect(seen).toContain(`the operation uses more than ${maxAliases} aliases`);
    expect(seen).toContain('GRAPHQL_VALIDATION_FAILED');
  });
});

describe("a subgraph's token and definition bounds", () => {
  it("refuses each of the QA probe's documents as it parses, with GRAPHQL_PARSE_FAILED", async () => {
    for (const [name, body] of Object.entries(TOKEN_PROBES)) {
      const started = performance.now();
      const response = await post(recognitionUrl, body);
      const result = (await response.json()) as GraphQLResult;
      const elapsed = performance.now() - started;
      expect({ name, status: response.status, data: result.data }).toEqual({ name, status: 400, data: undefined });
      expect(result.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(tooManyTokens(maxTokens)), extensions: expect.objectContaining({ code: 'GRAPHQL_PARSE_FAILED' }) })]);
      // Parsed and validated whole, each took about 330 ms; loose, for a busy machine.
      expect(elapsed).toBeLessThan(1000);
    }
  });

  it('refuses one in a batch of reads as it parses, and answers the read beside it', async () => {
    const response = await post(recognitionUrl, [TOKEN_PROBES.manyOperations, { query: '{ __typename }' }], { [READ_BATCH_HEADER]: '-,-' });
    expect(response.status).toBe(200);
    const reader = new FrameReader(2, 1024 * 1024);
    const frames = Object.fromEntries(reader.push(Buffer.from(await response.arrayBuffer())).map((frame) => [frame.index, frame]));
    expect(frames[0]!.status).toBe(400);
    expect((JSON.parse(frames[0]!.body.toString('utf8')) as GraphQLResult).errors).toEqual([expect.objectContaining({ message: expect.stringMatching(tooManyTokens(maxTokens)), extensions: expect.objectContaining({ code: 'GRAPHQL_PARSE_FAILED' }) })]);
    expect(JSON.parse(frames[1]!.body.toString('utf8'))).toEqual({ data: { __typename: 'Query' } });
  });

  it('refuses a subscription document past the token bound on its WebSocket, with GRAPHQL_PARSE_FAILED', async () => {
    const seen = await wsOutcome(recognitionUrl, manySubscriptions(20_000));
    expect(seen).toMatch(/Document contains more tha[nt] 80000 tokens/);
    expect(seen).toContain('GRAPHQL_PARSE_FAILED');
  });

  it(`refuses more than ${maxDefinitions} operations and fragments with GRAPHQL_VALIDATION_FAILED, over HTTP and on its WebSocket`, async () => {
    const result = (await (await post(recognitionUrl, { query: manyOperations(maxDefinitions + 1), operationName: 'Q0' })).json()) as GraphQLResult;
    expect(result.errors).toEqual([expect.objectContaining({ message: `the document holds ${maxDefinitions + 1} operations and fragments; at most ${maxDefinitions} are allowed`, extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
    expect(await (await post(recognitionUrl, { query: manyOperations(maxDefinitions), operationName: 'Q0' })).json()).toEqual({ data: { __typename: 'Query' } });
    expect(await wsOutcome(recognitionUrl, manySubscriptions(maxDefinitions + 1))).toContain(`at most ${maxDefinitions} are allowed`);
  });
});

describe("through the gateway, at the gateway's own limits", () => {
  it('answers a query at all four limits at once, over two subgraphs', async () => {
    const listed = await t.gql<{ dashboards: { edges: { node: { id: string; widgets: { edges: unknown[] } } }[] } }>('{ dashboards(first: 20) { edges { node { id widgets(first: 1) { edges { node { id } } } } } } }', { headers: t.stack.demoHeaders });
    const withWidget = listed.data!.dashboards.edges.find((edge) => edge.node.widgets.edges.length > 0)!.node.id;
    const result = await t.gql<Record<string, unknown>>(queryAtGatewayLimits(withWidget), { headers: t.stack.demoHeaders });
    expect(result.errors).toBeUndefined();
    expect(result.data).toMatchObject({ deep: { widgets: { edges: [{ node: { dashboard: { widgets: { edges: [{ node: { dashboard: { widgets: { pageInfo: { hasNextPage: expect.any(Boolean) } } } } }] } } } }] } } });
    expect(Object.keys(result.data!)).toHaveLength(50);
    for (let index = 0; index < 48; index += 1) expect((result.data![`c${index}`] as unknown[]).length).toBeGreaterThan(0);
    // With the subgraphs' limits in force.
    expect(await refusesPastItsLimits(recognitionUrl)).toBe(true);
    expect(await refusesPastItsLimits(subgraphUrlOf('dashboards'))).toBe(true);
  });

  it("delivers a subscription at the field and alias limits, completed by a second subgraph's entity fetches, though the gateway asks the first for 101 aliases", async () => {
    const kudos = await startKudosSubgraph();
    closeAfterFile(() => kudos.close());
    const gateway = await startGateway(
      readGatewayConfig({}, { port: 0, supergraphSdl: composeWithKudos(recognitionUrl, kudos.graphqlUrl), subgraphUrls: { recognition: recognitionUrl, kudos: kudos.graphqlUrl } }),
      testLogger('kudos-gateway'),
    );
    closeAfterFile(() => gateway.close());
    const subscription = subscribeWs(gateway.graphqlUrl, subscriptionAtGatewayLimits(), { connectionParams: member });
    try {
      await waitForEventSubscriptions(recognitionUrl, 1);
      const { bonus } = (await recognition.control('bonuses', { amount: 7, hashtag: 'limits' })) as { bonus: { id: string } };
      const [event] = await subscription.waitFor(1);
      expect(event!.errors).toBeUndefined();
      const delivered = (event!.data as { bonusCreated: { bonus: Record<string, unknown>; other: Record<string, unknown> } }).bonusCreated;
      expect(delivered.bonus).toMatchObject({ id: bonus.id, celebration: `Party for ${bonus.id}`, hashtag: '#limits', a0: 7, a97: 7 });
      expect(delivered.other).toMatchObject({ celebration: `Party for ${bonus.id}` });
      expect(kudos.lookups).toContain(bonus.id);
    } finally {
      subscription.close();
    }
    // With the subgraphs' limits in force, the second subgraph's too.
    expect(await refusesPastItsLimits(recognitionUrl)).toBe(true);
    expect(await refusesPastItsLimits(kudos.graphqlUrl)).toBe(true);
  });
});

describe('with the MAX_QUERY_* settings raised', () => {
  it('takes four times the raised settings, as the gateway\'s process reads them, over HTTP and on its WebSocket', { timeout: 30_000 }, async () => {
    // 150 aliases and 200 root fields allowed by the gateway: 600 and 800 for each subgraph, past the default 400 and 200.
    const raised = await startTestStack({ MAX_QUERY_ALIASES: '150', MAX_QUERY_ROOT_FIELDS: '200' });
    const url = raised.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
    const aliased = (count: number) => Array.from({ length: count }, (_, index) => `a${index}: __typename`).join(' ');
    const answered = (await (await post(url, { query: `{ ${aliased(600)} }` })).json()) as GraphQLResult;
    expect(answered.errors).toBeUndefined();
    expect(Object.keys(answered.data!)).toHaveLength(600);
    const refused = (await (await post(url, { query: `{ ${aliased(601)} }` })).json()) as GraphQLResult;
    expect(messages(refused)).toEqual(['the operation uses more than 600 aliases']);
    const ids = Array.from({ length: 601 }, (_, index) => `i${index}: id`).join(' ');
    const subscription = subscribeWs(url, `subscription { bonusCreated { ${ids} } }`, { connectionParams: member });
    const ended = await Promise.race([subscription.ended, new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
    subscription.close();
    expect(`${JSON.stringify(subscription.results)} ${JSON.stringify(ended)}`).toContain('the operation uses more than 600 aliases');
  });
});

describe('with MAX_QUERY_TOKENS and MAX_QUERY_DEFINITIONS raised', () => {
  it('the gateway takes the raised bounds, and each subgraph four times them, over HTTP and on its WebSocket', { timeout: 30_000 }, async () => {
    const raised = await startTestStack({ MAX_QUERY_TOKENS: '30000', MAX_QUERY_DEFINITIONS: '300' });
    const url = raised.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl;
    // 4,999 operations, 25,000 tokens: past the default 20,000, within 30,000; refused for their number instead.
    const atGateway = (await (await post(raised.graphqlUrl, { query: manyOperations(4999), operationName: 'Q0' })).json()) as GraphQLResult;
    expect(messages(atGateway)).toEqual(['the document holds 4999 operations and fragments; at most 300 are allowed']);
    expect(await (await post(raised.graphqlUrl, { query: manyOperations(300), operationName: 'Q299' })).json()).toEqual({ data: { __typename: 'Query' } });
    // 100,000 tokens: past a subgraph's default 80,000, within 120,000.
    const atSubgraph = (await (await post(url, TOKEN_PROBES.manyOperations)).json()) as GraphQLResult;
    expect(messages(atSubgraph)).toEqual(['the document holds 20000 operations and fragments; at most 1200 are allowed']);
    expect(await (await post(url, { query: manyOperations(1200), operationName: 'Q0' })).json()).toEqual({ data: { __typename: 'Query' } });
    // 14,000 subscriptions of eight tokens: 112,000.
    expect(await wsOutcome(url, manySubscriptions(14_000))).toContain('at most 1200 are allowed');
  });
});
