import WebSocket from 'ws';
import { sendOversizedFrame, streamBody } from '../../test/support/transports.ts';

/** What one attack came to: `expected` when the graph refused it as documented. */
export interface AttackOutcome {
  expected: boolean;
  detail: string;
}

export interface AttackTarget {
  graphqlUrl: string;
  headers: Record<string, string>;
}

export type Attack = (target: AttackTarget) => Promise<AttackOutcome>;

const json = { 'content-type': 'application/json' };
const outcome = (expected: boolean, detail: string): AttackOutcome => ({ expected, detail });

async function post(target: AttackTarget, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(target.graphqlUrl, { method: 'POST', headers: { ...json, ...target.headers, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

const codesOf = (text: string): string[] => {
  try {
    return ((JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] }).errors ?? []).map((error) => String(error.extensions?.code));
  } catch {
    return [];
  }
};

export const ATTACKS: Record<string, Attack> = {
  async sseBodyOverLimit(target) {
    const result = await streamBody(target.graphqlUrl, { ...target.headers, accept: 'text/event-stream' }, 8 * 1024 * 1024);
    return outcome(result.status === 413 || result.reset !== undefined, `status ${result.status ?? result.reset}`);
  },
  async httpBodyOverLimit(target) {
    const result = await streamBody(target.graphqlUrl, target.headers, 8 * 1024 * 1024);
    return outcome(result.status === 413 || result.reset !== undefined, `status ${result.status ?? result.reset}`);
  },
  async wsFrameOverLimit(target) {
    const code = await sendOversizedFrame(target.graphqlUrl, 4 * 1024 * 1024);
    return outcome(code === 1009, `close ${code}`);
  },
  async sseReservation(target) {
    const response = await fetch(target.graphqlUrl, { method: 'PUT', headers: target.headers });
    await response.text();
    return outcome(response.status === 405, `status ${response.status}`);
  },
  async csrfTextPlainMutation(target) {
    const { status, text } = await post(target, { query: 'mutation { deleteWebhook(id: "wh_none") { __typename } }' }, { 'content-type': 'text/plain;x=json' });
    return outcome(status === 400 && codesOf(text).every((code) => code === 'BAD_REQUEST'), `status ${status}`);
  },
  async csrfFormMutation(target) {
    const { status, text } = await post(target, { query: 'mutation { deleteWebhook(id: "wh_none") { __typename } }' }, { 'content-type': 'application/x-www-form-urlencoded;json' });
    return outcome(status === 400 && codesOf(text).every((code) => code === 'BAD_REQUEST'), `status ${status}`);
  },
  async loneSurrogate(target) {
    const { status, text } = await post(target, '{"query":"query($id: ID!) { redemption(id: $id) { id } }","variables":{"id":"\\ud800"}}');
    return outcome(status === 400 && codesOf(text).join() === 'BAD_USER_INPUT', `status ${status} ${codesOf(text).join()}`);
  },
  async twoAnonymousOperations(target) {
    const { status, text } = await post(target, { query: '{ hashtagTrends { hashtag } } { teapot }' });
    return outcome(status === 400 && codesOf(text).every((code) => code === 'GRAPHQL_VALIDATION_FAILED'), `status ${status}`);
  },
  async badDateLiteral(target) {
    const { status, text } = await post(target, { query: '{ leaderboard(direction: GIVEN, startDate: "2026-13-45") { count } }' });
    return outcome(status === 400 && !text.includes('"data"') && codesOf(text).join() === 'BAD_USER_INPUT', `status ${status} ${codesOf(text).join()}`);
  },
  async suggestionProbe(target) {
    const { status, text } = await post(target, { query: '{ hashtagTrendz { hashtag } }' });
    return outcome(status === 400 && !text.includes('Did you mean'), `status ${status}`);
  },
  async forwardedHostSpoof(target) {
    const { status, text } = await post(target, { query: '{ teapot }' }, { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    return outcome(status < 500 && !text.includes('evil.example'), `status ${status}`);
  },
  /** Twice the default per-connection cap (50), distinct variables each: half must be refused. */
  async subscriptionFlood(target) {
    const socket = new WebSocket(target.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const codes = new Map<string, number>();
    const refused = await new Promise<number>((resolve) => {
      let errors = 0;
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: target.headers })));
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string; payload?: { extensions?: { code?: string } }[] };
        if (message.type === 'connection_ack') {
          for (let index = 0; index < 100; index += 1) {
            socket.send(JSON.stringify({ id: String(index), type: 'subscribe', payload: { query: 'subscription ($tag: String) { bonusCreated(filter: { hashtag: $tag }) { id } }', variables: { tag: `flood${index}` } } }));
          }
        } else if (message.type === 'error') {
          const code = String(message.payload?.[0]?.extensions?.code);
          codes.set(code, (codes.get(code) ?? 0) + 1);
          errors += 1;
          if (errors === 50) resolve(errors);
        }
      });
      socket.on('close', () => resolve(errors));
      setTimeout(() => resolve(errors), 10_000);
    });
    socket.close();
    return outcome(refused === 50 && codes.get('RATE_LIMITED') === 50, `refused ${refused}: ${JSON.stringify(Object.fromEntries(codes))}`);
  },
};
