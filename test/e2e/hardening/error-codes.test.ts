import { describe, expect, it } from 'vitest';
import { startTestStack } from '../../support/stack.ts';
import WebSocket from 'ws';
import { TRANSPORTS } from '../../support/transports.ts';
import { capturedLogs } from '../../support/logs.ts';

/**
 * Issue 14, items 11 (the transports' part) and 12: every refusal carries its documented code, the
 * same on HTTP, SSE and graphql-ws, and production names no schema member in a suggestion.
 */
const dev = await startTestStack();
const production = await startTestStack({ NODE_ENV: 'production' });
const ANY = Object.entries(TRANSPORTS);
/**
 * A request's GraphQL errors: HTTP 400 over HTTP and multipart HTTP; over SSE the stream's one result (graphql-sse's
 * protocol: the client sees the errors, not a bare status); over graphql-ws an `error` message.
 */
const REFUSED_STATUS: Record<string, number> = { http: 400, sse: 200, multipart: 400, ws: 0 };

/** Every graphql-ws message about operation `1`, up to the one that ends it (`error` or `complete`). */
function wsMessagesOf(url: string, payload: unknown, connectionParams: Record<string, string>): Promise<{ type: string; payload?: unknown }[]> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const messages: { type: string; payload?: unknown }[] = [];
  return new Promise((resolve, reject) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: connectionParams })));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: string; type: string; payload?: unknown };
      if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload }));
      if (message.id !== '1') return;
      messages.push({ type: message.type, payload: message.payload });
      if (message.type === 'error' || message.type === 'complete') {
        resolve(messages);
        socket.close();
      }
    });
    socket.on('close', () => resolve(messages));
    socket.on('error', reject);
  });
}

/** A variable of the wrong type and a required one missing, for a query and for a subscription. */
const BAD_VARIABLES = [
  { query: 'query ($id: ID!) { redemption(id: $id) { id } }', variables: { id: { a: 1 } } },
  { query: 'query ($id: ID!) { redemption(id: $id) { id } }', variables: {} },
  { query: 'subscription ($t: String) { bonusCreated(filter: { hashtag: $t }) { id } }', variables: { t: { a: 1 } } },
  { query: 'subscription ($t: String!) { bonusCreated(filter: { hashtag: $t }) { id } }', variables: {} },
];

describe('refusals coded the same on every transport', () => {
  it.each(ANY)('a variable of the wrong type or a required one missing is BAD_USER_INPUT before anything runs, for a query or a subscription, over %s', async (name, send) => {
    // A subscription over plain HTTP is refused for its transport (406) before its variables are read.
    for (const body of BAD_VARIABLES.filter(({ query }) => name !== 'http' || query.startsWith('query'))) {
      const outcome = await send(dev.graphqlUrl, body, dev.stack.demoHeaders);
      expect(outcome.status, body.query).toBe(REFUSED_STATUS[name]);
      expect(outcome.body).not.toHaveProperty('data');
      expect(outcome.body?.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      expect(outcome.body?.errors?.[0]?.message).toMatch(/^Variable "\$(id|t)" (got invalid value|of required type)/);
    }
    expect(dev.stack.gateway.subscriptions.stats()).toMatchObject({ subscribers: 0, upstreams: 0 });
  });

  it('an operation name that names no operation is 400 OPERATION_RESOLUTION_FAILURE over HTTP, never a 500, first time and repeat', async () => {
    for (const body of [
      { query: 'query A { teapot }', operationName: 'Nope' },
      { query: 'query A { teapot } query B { teapot }' },
      { query: 'mutation M { deleteWebhook(id: "wh_1") { id } }', operationName: 'Other' },
    ]) {
      for (let round = 0; round < 2; round++) {
        const outcome = await TRANSPORTS.http(dev.graphqlUrl, body, dev.stack.demoHeaders);
        expect(outcome.status, body.query).toBe(400);
        expect(outcome.body?.errors?.map((error) => error.extensions?.code)).toEqual(['OPERATION_RESOLUTION_FAILURE']);
      }
    }
  });

  it('over graphql-ws a variable error is the operation’s `error` message, not a result, for a query or a subscription', async () => {
    for (const body of BAD_VARIABLES) {
      const messages = await wsMessagesOf(dev.graphqlUrl, body, dev.stack.demoHeaders);
      expect(messages, body.query).toEqual([{ type: 'error', payload: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })] }]);
    }
  });


  it.each(ANY)('a lone surrogate in a variable is BAD_USER_INPUT (HTTP 400), logged as nothing unexpected, over %s', async (name, send) => {
    const before = capturedLogs.filter((line) => line.includes('unexpected error')).length;
    const outcome = await send(dev.graphqlUrl, JSON.parse('{"query":"query ($id: ID!) { redemption(id: $id) { id } }","variables":{"id":"rd_\\ud800"}}'), dev.stack.demoHeaders);
    expect(outcome.status).toBe(REFUSED_STATUS[name]);
    expect(outcome.body?.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(outcome.body).not.toHaveProperty('data');
    expect(capturedLogs.filter((line) => line.includes('unexpected error')).length).toBe(before);
  });

  it.each(ANY)('two anonymous operations are GRAPHQL_VALIDATION_FAILED (HTTP 400) over %s', async (name, send) => {
    const outcome = await send(dev.graphqlUrl, { query: '{ hashtagTrends { hashtag } } { teapot }' }, dev.stack.demoHeaders);
    expect(outcome.status).toBe(REFUSED_STATUS[name]);
    expect(new Set(outcome.body?.errors?.map((error) => error.extensions?.code))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
  });

  it.each(ANY)('a bad Date literal is a validation error coded BAD_USER_INPUT with its argument, without data, over %s', async (name, send) => {
    for (const literal of ['"2026-13-45"', '"yesterday"', '20261101']) {
      const outcome = await send(dev.graphqlUrl, { query: `{ leaderboard(direction: GIVEN, startDate: ${literal}) { count } }` }, dev.stack.demoHeaders);
      expect(outcome.status).toBe(REFUSED_STATUS[name]);
      expect(outcome.body).not.toHaveProperty('data');
      expect(outcome.body?.errors?.map((error) => error.extensions)).toEqual([expect.objectContaining({ code: 'BAD_USER_INPUT', argument: 'startDate' })]);
    }
    const good = await send(dev.graphqlUrl, { query: '{ leaderboard(direction: GIVEN, startDate: "2026-11-01") { count } }' }, dev.stack.demoHeaders);
    expect(good.body?.errors).toBeUndefined();
  });

  it.each(ANY)('a bad Date variable is BAD_USER_INPUT naming its argument, refused before any subgraph call, over %s', async (name, send) => {
    const emulators = [dev.emulator('recognition'), dev.emulator('marketplace')];
    // One subgraph (the one-fetch path, and the pass-through once remembered), and two (Apollo Gateway's own).
    const ONE = 'query ($d: Date) { leaderboard(direction: GIVEN, startDate: $d) { count } }';
    const TWO = 'query ($d: Date) { leaderboard(direction: GIVEN, startDate: $d) { count } labelGroups { id } }';
    for (const query of [ONE, TWO]) {
      // Twice good first: the second is a repeat, which the pass-through may answer.
      for (let round = 0; round < 2; round += 1) expect((await send(dev.graphqlUrl, { query, variables: { d: '2026-11-01' } }, dev.stack.demoHeaders)).body?.errors).toBeUndefined();
      for (const d of ['2026-13-45', '2026-02-30', 'yesterday', 20261101]) {
        await Promise.all(emulators.map((emulator) => emulator.clearRequests()));
        const outcome = await send(dev.graphqlUrl, { query, variables: { d } }, dev.stack.demoHeaders);
        expect(outcome.status).toBe(REFUSED_STATUS[name]);
        expect(outcome.body).not.toHaveProperty('data');
        expect(outcome.body?.errors?.map((error) => error.extensions)).toEqual([expect.objectContaining({ code: 'BAD_USER_INPUT', argument: 'startDate' })]);
        expect(outcome.body?.errors?.[0]?.message).toMatch(/^Variable "\$d" got invalid value .*; Date/);
        for (const emulator of emulators) expect(await emulator.requests()).toEqual([]);
      }
    }
  });

  it.each(ANY)('parse and validation errors carry their codes over %s', async (_name, send) => {
    const parse = await send(dev.graphqlUrl, { query: '{ teapot' }, dev.stack.demoHeaders);
    expect(parse.body?.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    const unknown = await send(dev.graphqlUrl, { query: '{ hashtagTrendz { hashtag } }' }, dev.stack.demoHeaders);
    expect(unknown.body?.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    // Development keeps graphql-js's help.
    expect(unknown.body?.errors?.[0]?.message).toMatch(/Did you mean "hashtagTrends"\?/);
  });
});

describe('no suggestions in production', () => {
  const probes = [
    '{ hashtagTrendz { hashtag } }',
    '{ leaderboard(direction: GIVN) { count } }',
    '{ leaderboard(directon: GIVEN) { count } }',
    '{ leaderboard(direction: GIVEN, team: { managerID: "usr_001" }) { count } }',
  ];
  it.each(ANY)('names no schema member over %s, for fields, arguments, enum values and input fields', async (_name, send) => {
    for (const query of probes) {
      const outcome = await send(production.graphqlUrl, { query }, production.stack.demoHeaders);
      expect(outcome.body?.errors?.length).toBeGreaterThan(0);
      expect(outcome.text).not.toMatch(/Did you mean/);
    }
    const variable = await send(production.graphqlUrl, { query: 'query ($d: LeaderboardDirection!) { leaderboard(direction: $d) { count } }', variables: { d: 'GIVN' } }, production.stack.demoHeaders);
    expect(variable.body?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(variable.text).not.toMatch(/Did you mean/);
  });
});
