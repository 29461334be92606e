import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { capturedLogs } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeWs, type Collected } from '../support/subscribers.ts';
import { overMultipart, overSse, overWs } from '../support/transports.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

/**
 * QA pass 9, item 3: `@skip` or `@include` in a subscription's top-level selection made graphql-js's
 * single-root-field rule throw (it reads no variables), which was a 500 on SSE and multipart HTTP and
 * closed a whole graphql-ws connection with 4500. The spec forbids them there (a subscription's root
 * field cannot depend on a variable); each such operation is now refused alone, coded.
 */
const t = await startTestStack();
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services[0]!.subgraphUrl;
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const open: Collected[] = [];
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(subgraphUrl, 0);
});

const ROOT_DIRECTIVES = [
  { query: 'subscription ($s: Boolean!) { bonusCreated @include(if: $s) { id } }', variables: { s: true } },
  { query: 'subscription ($s: Boolean!) { bonusCreated @include(if: $s) { id } }', variables: { s: false } },
  { query: 'subscription ($s: Boolean!) { bonusCreated @skip(if: $s) { id } }', variables: { s: false } },
  { query: 'subscription Feed($s: Boolean = false) { ...F @skip(if: $s) } fragment F on Subscription { bonusCreated { id } }', variables: {} },
  { query: 'subscription ($s: Boolean!) { ... on Subscription @include(if: $s) { bonusCreated { id } } }', variables: { s: true } },
  { query: 'subscription { bonusCreated @include(if: true) { id } }', variables: {} },
];

const refusal = (operationName = 'Anonymous Subscription') => ({
  errors: [{ message: `${operationName} must not use \`@skip\` or \`@include\` directives in the top level selection.`, locations: expect.any(Array), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
});

describe('@skip and @include on a subscription’s root', () => {
  it.each([
    ['sse', overSse, 200],
    ['multipart', overMultipart, 400],
    ['ws', overWs, 0],
  ] as const)('are GRAPHQL_VALIDATION_FAILED before anything runs, over %s', async (_name, send, status) => {
    for (const body of ROOT_DIRECTIVES) {
      const outcome = await send(t.graphqlUrl, body, member);
      expect(outcome.status, body.query).toBe(status);
      expect(outcome.body, body.query).toEqual(refusal(body.query.includes('Feed') ? 'Subscription "Feed"' : undefined));
    }
    expect(t.stack.gateway.subscriptions.stats()).toMatchObject({ subscribers: 0, upstreams: 0 });
    expect(capturedLogs.filter((line) => line.includes('not provided a runtime value'))).toEqual([]);
  });

  it('are GRAPHQL_VALIDATION_FAILED over a plain POST or GET too, not a 500', async () => {
    for (const body of ROOT_DIRECTIVES) {
      const answer = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...member }, body: JSON.stringify(body) });
      expect(answer.status, body.query).toBe(400);
      expect((await answer.json()) as unknown, body.query).toMatchObject({ errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
    }
    const search = new URLSearchParams({ query: ROOT_DIRECTIVES[0]!.query, variables: JSON.stringify(ROOT_DIRECTIVES[0]!.variables) });
    const get = await fetch(`${t.graphqlUrl}?${search}`, { headers: { 'apollo-require-preflight': 'true', ...member } });
    expect(get.status).toBe(400);
    expect(capturedLogs.filter((line) => line.includes('not provided a runtime value'))).toEqual([]);
  });

  it('end only their own operation over graphql-ws: the connection’s other subscriptions go on', async () => {
    const socket = new WebSocket(t.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const messages: { id?: string; type: string; payload?: unknown }[] = [];
    let closed: number | undefined;
    socket.on('close', (code) => (closed = code));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: string; type: string; payload?: unknown };
      messages.push(message);
      if (message.type !== 'connection_ack') return;
      socket.send(JSON.stringify({ id: 'healthy', type: 'subscribe', payload: { query: 'subscription { bonusCreated { id } }' } }));
      socket.send(JSON.stringify({ id: 'skipped', type: 'subscribe', payload: ROOT_DIRECTIVES[0] }));
    });
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: member }));
    try {
      await waitForEventSubscriptions(subgraphUrl, 1);
      await expect.poll(() => messages.filter((message) => message.id === 'skipped')).toEqual([{ id: 'skipped', type: 'error', payload: refusal().errors }]);
      const { bonus } = (await emulator.control('bonuses', {})) as { bonus: { id: string } };
      await expect.poll(() => messages.filter((message) => message.id === 'healthy')).toEqual([{ id: 'healthy', type: 'next', payload: { data: { bonusCreated: { id: `bonus.created:${bonus.id}` } } } }]);
      expect(closed).toBeUndefined();
    } finally {
      socket.close();
    }
  });

  it('nested in the root field, with variables, still stream', async () => {
    const subscription = subscribeWs(t.graphqlUrl, 'subscription ($s: Boolean!) { bonusCreated { id cursor @include(if: $s) bonus @skip(if: $s) { id } } }', { connectionParams: member, variables: { s: true } });
    open.push(subscription);
    await waitForEventSubscriptions(subgraphUrl, 1);
    const { bonus } = (await emulator.control('bonuses', {})) as { bonus: { id: string } };
    expect(await subscription.waitFor(1)).toEqual([{ data: { bonusCreated: { id: `bonus.created:${bonus.id}`, cursor: expect.any(String) } } }]);
  });
});
