import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { knownSecrets } from '../../support/logs.ts';
import { startTestStack } from '../../support/stack.ts';
import { subscribeSse, type Collected } from '../../support/subscribers.ts';
import { waitUntil } from '../../support/waitFor.ts';

/**
 * Issue 14, item 5: one client cannot open subscriptions without bound. Caps per graphql-ws
 * connection and per credential (subscriptions, and distinct upstream streams), each refusal
 * coded RATE_LIMITED; and a credential's check upstream is remembered briefly, per credential,
 * so a bogus token costs one upstream call, not one per subscribe.
 */
const t = await startTestStack({
  MAX_SUBSCRIPTIONS_PER_CONNECTION: '3',
  MAX_SUBSCRIPTIONS_PER_CREDENTIAL: '5',
  MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL: '4',
  RECOGNITION_CREDENTIAL_CHECK_TTL_MS: '600000',
});
const emulator = t.emulator('recognition');
const QUERY = 'subscription ($tag: String) { bonusCreated(filter: { hashtag: $tag }) { id } }';

interface Connection {
  subscribe(id: string, tag: string): void;
  /** The first `error` for this operation id, or undefined if it is still live once `live()` holds. */
  errorOf(id: string): { message: string; extensions?: { code?: string } } | undefined;
  close(): void;
}

const open: { close(): void }[] = [];

async function connect(token: string): Promise<Connection> {
  const socket = new WebSocket(t.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const errors = new Map<string, { message: string; extensions?: { code?: string } }>();
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-recognition-token': token } })));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: string; type: string; payload?: { message: string }[] };
      if (message.type === 'connection_ack') resolve();
      if (message.type === 'error' || (message.type === 'next' && message.payload && 'errors' in message.payload)) {
        const payload = message.type === 'error' ? message.payload : (message.payload as unknown as { errors: { message: string }[] }).errors;
        errors.set(message.id!, payload![0]!);
      }
    });
    socket.on('error', reject);
  });
  const connection: Connection = {
    subscribe: (id, tag) => socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: QUERY, variables: { tag } } })),
    errorOf: (id) => errors.get(id),
    close: () => socket.close(),
  };
  open.push(connection);
  return connection;
}

const stats = () => t.stack.gateway.subscriptions.stats();
const checks = async () => (await emulator.requests()).filter((request) => request.path === '/api/v1/api_keys').length;

beforeEach(async () => {
  await emulator.clearRequests();
});
afterEach(async () => {
  for (const connection of open.splice(0)) connection.close();
  await waitUntil(() => stats().subscribers === 0 && stats().upstreams === 0, () => `every subscription closed (${JSON.stringify(stats())})`);
});

describe('subscription caps', () => {
  it('refuses the operation past MAX_SUBSCRIPTIONS_PER_CONNECTION on one connection, keeping the others', async () => {
    const connection = await connect(DEMO_TOKENS.member);
    for (const id of ['1', '2', '3', '4']) connection.subscribe(id, `tag${id}`);
    await waitUntil(() => connection.errorOf('4') !== undefined && stats().subscribers === 3, () => `three live, the fourth refused (${JSON.stringify(stats())})`);
    expect(connection.errorOf('4')?.extensions?.code).toBe('RATE_LIMITED');
    expect(['1', '2', '3'].map((id) => connection.errorOf(id))).toEqual([undefined, undefined, undefined]);
  });

  it('caps one credential’s distinct streams and subscriptions over every connection; identical ones share a stream', async () => {
    const first = await connect(DEMO_TOKENS.member);
    const second = await connect(DEMO_TOKENS.member);
    first.subscribe('a', 'one');
    first.subscribe('b', 'two');
    first.subscribe('c', 'three');
    second.subscribe('d', 'four');
    await waitUntil(() => stats().upstreams === 4, () => `four streams (${JSON.stringify(stats())})`);
    // A fifth distinct stream is refused; the same operation and variables as a held one joins it.
    second.subscribe('e', 'five');
    second.subscribe('f', 'one');
    await waitUntil(() => second.errorOf('e') !== undefined && stats().subscribers === 5, () => `fifth stream refused, identical joined (${JSON.stringify(stats())})`);
    expect(second.errorOf('e')?.extensions?.code).toBe('RATE_LIMITED');
    expect(second.errorOf('f')).toBeUndefined();
    expect(stats().upstreams).toBe(4);
    // Five subscriptions is this credential's most, even joining a held stream, even on a new connection.
    const third = await connect(DEMO_TOKENS.member);
    third.subscribe('g', 'one');
    await waitUntil(() => third.errorOf('g') !== undefined, () => 'sixth subscription refused');
    expect(third.errorOf('g')?.extensions?.code).toBe('RATE_LIMITED');
    // Another credential is counted apart.
    const other = await connect(DEMO_TOKENS.admin);
    other.subscribe('h', 'one');
    await waitUntil(() => stats().subscribers === 6, () => `another credential subscribes (${JSON.stringify(stats())})`);
    expect(other.errorOf('h')).toBeUndefined();
    // Closing gives the slots back.
    first.close();
    await waitUntil(() => stats().subscribers === 3, () => `first connection's subscriptions gone (${JSON.stringify(stats())})`);
    third.subscribe('i', 'six');
    await waitUntil(() => stats().subscribers === 4, () => `a freed slot is used (${JSON.stringify(stats())})`);
    expect(third.errorOf('i')).toBeUndefined();
  });
});

/** How a connection whose `connection_init` carries these params closes, or 'acknowledged'. */
function initOutcome(params: Record<string, unknown>): Promise<{ code: number; reason: string } | 'acknowledged'> {
  const socket = new WebSocket(t.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
  return new Promise((resolve, reject) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: params })));
    socket.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack') {
        resolve('acknowledged');
        socket.close();
      }
    });
    socket.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
    socket.on('error', reject);
  });
}

describe('one credential, however it is written', () => {
  it('counts a credential padded with spaces or tabs (graphql-ws) as the credential itself, for the caps and for sharing, and one padded with a no-break space as another, which the service refuses', async () => {
    const exact = await connect(DEMO_TOKENS.member);
    exact.subscribe('a', 'one');
    exact.subscribe('b', 'two');
    exact.subscribe('c', 'three');
    (await connect(DEMO_TOKENS.member)).subscribe('d', 'four');
    await waitUntil(() => stats().upstreams === 4, () => `four streams (${JSON.stringify(stats())})`);

    // Node strips the spaces and tabs around a header value; connectionParams get the same.
    const padded = await connect(`\t  ${DEMO_TOKENS.member} \t`);
    padded.subscribe('e', 'five');
    await waitUntil(() => padded.errorOf('e') !== undefined, () => `fifth stream refused (${JSON.stringify(stats())})`);
    expect(padded.errorOf('e')).toMatchObject({ extensions: { code: 'RATE_LIMITED' }, message: expect.stringContaining('MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL') });

    // A header may carry U+00A0. Every process trims a credential as a header is trimmed (spaces and
    // tabs), so the no-break space stays part of it: another credential, which the service refuses,
    // not a way around the caps. (The subgraph once trimmed it away, making it this one upstream.)
    const nbsp: Collected = subscribeSse(t.graphqlUrl, QUERY, { variables: { tag: 'six' }, headers: { 'x-recognition-token': `${DEMO_TOKENS.member}\u00a0` } });
    open.push(nbsp);
    const [refused] = await nbsp.waitFor(1);
    expect(refused?.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });

    // An identical subscription sent with the padded credential joins the held stream.
    padded.subscribe('f', 'one');
    await waitUntil(() => stats().subscribers === 5, () => `the padded subscriber joined (${JSON.stringify(stats())})`);
    expect(stats().upstreams).toBe(4);
    expect(padded.errorOf('f')).toBeUndefined();
  });

  it('refuses a connection whose credential no HTTP header could carry, as Node refuses such a request', async () => {
    const refusal = { code: 4400, reason: 'connectionParams "x-recognition-token" must be a string a header can carry' };
    for (const token of ['t'.repeat(16 * 1024 + 1), `${DEMO_TOKENS.member}\n`, `${DEMO_TOKENS.member}\r\nx-other: 1`, `${DEMO_TOKENS.member}\u0000`, `${DEMO_TOKENS.member}\u2028`, 42, [DEMO_TOKENS.member], { token: DEMO_TOKENS.member }]) {
      expect(await initOutcome({ 'X-Recognition-Token': token }), JSON.stringify(token)).toEqual(refusal);
    }
    expect(await initOutcome({ authorization: 'Bearer x\u0007' })).toEqual({ code: 4400, reason: 'connectionParams "authorization" must be a string a header can carry' });
    // Latin-1 and other parameters are as they were: not refused.
    expect(await initOutcome({ 'x-recognition-token': `${DEMO_TOKENS.member}\u00e9`, client: { name: 'app', version: 2 }, note: 'line\nbreak' })).toBe('acknowledged');
  });
});

describe('credential checks remembered per credential', () => {
  it('checks a bogus token once for many subscribes, and never lets another credential ride on a check', async () => {
    const bogus = 'bogus-subscriber-token-5c2e9d7a';
    knownSecrets.add(bogus);
    const connection = await connect(bogus);
    for (const id of ['1', '2', '3']) connection.subscribe(id, `bogus${id}`);
    await waitUntil(() => ['1', '2', '3'].every((id) => connection.errorOf(id) !== undefined), () => 'three refusals');
    expect(['1', '2', '3'].map((id) => connection.errorOf(id)?.extensions?.code)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED', 'UNAUTHENTICATED']);
    const again = await connect(bogus);
    again.subscribe('4', 'bogus4');
    await waitUntil(() => again.errorOf('4') !== undefined, () => 'a fourth refusal');
    expect(await checks()).toBe(1);

    // A valid credential after it is checked on its own, and a token that differs by one character is too.
    const valid = await connect(DEMO_TOKENS.readOnly);
    valid.subscribe('5', 'valid');
    const lookalike = `${bogus.slice(0, -1)}b`;
    knownSecrets.add(lookalike);
    const near = await connect(lookalike);
    near.subscribe('6', 'near');
    await waitUntil(() => near.errorOf('6') !== undefined && stats().subscribers === 1, () => `valid live, lookalike refused (${JSON.stringify(stats())})`);
    expect(near.errorOf('6')?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(valid.errorOf('5')).toBeUndefined();
    expect(await checks()).toBe(3);
  });
});
