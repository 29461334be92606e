import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { GraphQLError } from 'graphql';
import { Registry } from 'prom-client';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createRestTransport, type RestCall, type RestTransport, type RestTransportOptions } from '../../subgraphs/kit/transport.ts';
import { withCircuitBreaker } from '../../subgraphs/kit/upstreamBreaker.ts';
import { createBreakerGuards } from '../../lib/circuitBreakerGuards.ts';
import type { CircuitBreaker } from '../../lib/circuitBreaker.ts';
import { createCallScope } from '../../subgraphs/kit/callScope.ts';
import { createConnectionGateMetrics } from '../../lib/metrics.ts';
import { knownSecrets, testLogger } from '../support/logs.ts';
import { waitUntil } from '../support/waitFor.ts';

// The fair share of a service's connections, at the transport: a server on port 0 holds every
// request until the test answers it, so who got a connection, and when, is read from what arrived.
// Four connections, of which one caller may hold two at once (the default would leave one only).

const ALPHA = 'alpha-credential-0001';
const BETA = 'beta-credential-0002';
const GAMMA = 'gamma-credential-0003';
for (const secret of [ALPHA, BETA, GAMMA]) knownSecrets.add(secret);

interface Arrival {
  method: string;
  path: string;
  /** The credential the request carried, `-` for none. */
  caller: string;
  res: ServerResponse;
}

const arrivals: Arrival[] = [];
let answerAtOnce = false;
const answer = (arrival: Arrival) => {
  const { res } = arrival;
  if (res.writableEnded || res.destroyed) return;
  if (res.headersSent) res.end();
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
};
const answerAll = () => arrivals.forEach(answer);

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://held');
  req.resume();
  const arrival = { method: req.method ?? 'GET', path: url.pathname, caller: url.searchParams.get('token') ?? '-', res };
  arrivals.push(arrival);
  // A download: its headers and a first chunk at once, the rest held until the client lets go.
  if (url.pathname.startsWith('/files/')) res.writeHead(200, { 'content-type': 'application/pdf' }).write('%PDF-');
  else if (answerAtOnce) answer(arrival);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const transports: RestTransport[] = [];
afterAll(async () => {
  answerAll();
  for (const transport of transports) await transport.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  answerAll();
  arrivals.length = 0;
  answerAtOnce = false;
});

/** A transport with four connections behind a breaker that opens on `failures` failures in a row. */
function transportFor({ failures = 1, ...options }: Partial<RestTransportOptions> & { failures?: number } = {}): { transport: RestTransport; breaker: CircuitBreaker } {
  const bare = createRestTransport({ service: 'held', baseUrl, connections: 4, connectionsPerCaller: 2, timeoutMs: 4000, retries: 0, logger: testLogger('held'), ...options });
  transports.push(bare);
  const guard = createBreakerGuards({ settings: { failures, cooldownMs: 60_000 }, logger: testLogger('held'), registry: new Registry(), prefix: 'held' })('held')!;
  return { transport: withCircuitBreaker(bare, guard), breaker: guard.breaker };
}

const read = (caller: string | undefined, id: number | string, extra: Partial<RestCall> = {}): RestCall => ({
  operation: 'item',
  method: 'GET',
  path: `/items/${id}`,
  ...(caller ? { query: { token: caller }, secrets: [caller] } : {}),
  ...extra,
});

/** What a call came to: its answer's status, or its error's code and message. */
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ ok: true as const }),
    (error: unknown) => {
      if (!(error instanceof GraphQLError)) throw error;
      return { ok: false as const, code: error.extensions.code, message: error.message, extensions: error.extensions };
    },
  );

const from = (caller: string) => arrivals.filter((arrival) => arrival.caller === caller);

describe('a caller\'s share of its service\'s connections', () => {
  it('holds at most half of them: its further calls wait their turn in order, another caller\'s call goes at once', async () => {
    const { transport } = transportFor();
    const alpha = [1, 2, 3, 4].map((id) => outcome(transport.request(read(ALPHA, id))));
    await waitUntil(() => from(ALPHA).length === 2, () => 'two of alpha\'s calls');
    const beta = outcome(transport.request(read(BETA, 'b')));
    await waitUntil(() => from(BETA).length === 1, () => 'beta\'s call beside alpha\'s', 2000);
    expect(from(ALPHA)).toHaveLength(2);

    // First in, first out: the connection alpha's first call lets go of goes to its third.
    answer(from(ALPHA)[0]!);
    await waitUntil(() => from(ALPHA).length === 3, () => 'alpha\'s next call');
    expect(from(ALPHA).map((arrival) => arrival.path)).toEqual(['/items/1', '/items/2', '/items/3']);
    answerAtOnce = true;
    answerAll();
    expect(await Promise.all([...alpha, beta])).toEqual(Array(5).fill({ ok: true }));
    expect(from(ALPHA).at(-1)?.path).toBe('/items/4');
  });

  it('counts calls without a credential (the service\'s own) as one caller of their own', async () => {
    const { transport } = transportFor();
    const own = [1, 2, 3].map((id) => outcome(transport.request(read(undefined, id))));
    await waitUntil(() => from('-').length === 2, () => 'two service-level calls');
    const alpha = outcome(transport.request(read(ALPHA, 'a')));
    await waitUntil(() => from(ALPHA).length === 1, () => 'alpha\'s call beside the service\'s own', 2000);
    expect(from('-')).toHaveLength(2);
    answerAtOnce = true;
    answerAll();
    expect(await Promise.all([...own, alpha])).toEqual(Array(4).fill({ ok: true }));
  });

  it('refuses unsent a call that waited for its caller\'s own calls until less than half its deadline was left: the breaker does not count it', async () => {
    const { transport, breaker } = transportFor({ timeoutMs: 600 });
    const calls = [1, 2, 3, 4, 5].map((id) => outcome(transport.request(read(ALPHA, id))));
    const write = outcome(transport.request(read(ALPHA, 'w', { method: 'POST', body: { json: { name: 'x' } } })));
    // A waiting call whose request goes away leaves the queue at once.
    const controller = new AbortController();
    const cancelled = outcome(transport.request(read(ALPHA, 'cancelled', { scope: createCallScope({ budget: 100, signal: controller.signal }) })));
    await waitUntil(() => arrivals.length >= 2, () => 'two calls');
    controller.abort(new DOMException('the client went away', 'AbortError'));
    expect(await cancelled).toMatchObject({ ok: false, code: 'UPSTREAM_UNAVAILABLE', message: 'held was not called: the request was cancelled' });
    // Past half the deadline (300 ms), well inside it: the slow answers come.
    await sleep(400);
    answerAll();
    const outcomes = await Promise.all([...calls, write]);

    expect(outcomes.slice(0, 2)).toEqual([{ ok: true }, { ok: true }]);
    for (const refused of outcomes.slice(2)) {
      expect(refused).toMatchObject({ ok: false, code: 'UPSTREAM_UNAVAILABLE' });
      expect(refused.ok || refused.message).toMatch(
        /^held is unavailable: it was not sent, as less than half of its 600 ms deadline was left when a connection came free \(this caller has 1 call in flight; one caller may hold 2 of the 4 connections at once\)$/,
      );
      expect(refused.ok || refused.extensions).not.toHaveProperty('status');
      // Never sent: nothing to read back before sending the write again.
      expect(refused.ok || refused.extensions).not.toHaveProperty('writeOutcome');
    }
    expect(arrivals).toHaveLength(2);
    expect(breaker.state()).toBe('closed');
  });

  it('refuses unsent a call under its share that found every connection busy until less than half its deadline was left: the breaker does not count it', async () => {
    const { transport, breaker } = transportFor({ timeoutMs: 600 });
    const held = [ALPHA, ALPHA, BETA, BETA].map((caller, index) => outcome(transport.request(read(caller, index))));
    await waitUntil(() => arrivals.length === 4, () => 'four calls holding the four connections');
    const gamma = outcome(transport.request(read(GAMMA, 'g')));
    await sleep(400);
    answerAll();
    expect(await Promise.all(held)).toEqual(Array(4).fill({ ok: true }));
    const refused = await gamma;
    expect(refused).toMatchObject({ ok: false, code: 'UPSTREAM_UNAVAILABLE' });
    expect(refused.ok || refused.message).toMatch(
      /^held is unavailable: it was not sent, as less than half of its 600 ms deadline was left when a connection came free \(this caller has 0 calls in flight; one caller may hold 2 of the 4 connections at once\)$/,
    );
    expect(from(GAMMA)).toHaveLength(0);
    expect(breaker.state()).toBe('closed');
  });

  it('bounds the calls one caller may have waiting: past it, RATE_LIMITED at once', async () => {
    const { transport } = transportFor();
    // Two in flight, and 16 waiting per connection of the service.
    const admitted = Array.from({ length: 2 + 64 }, (_, id) => outcome(transport.request(read(ALPHA, id))));
    await waitUntil(() => arrivals.length === 2, () => 'two calls');
    const extra = await outcome(transport.request(read(ALPHA, 'extra')));
    expect(extra).toMatchObject({ ok: false, code: 'RATE_LIMITED' });
    expect(extra.ok || extra.message).toMatch(/^held was not called: this caller already has 64 calls waiting for a connection, the most it may have \(2 in flight; one caller may hold 2 of the 4 connections at once\)$/);
    // Another caller is not refused for it.
    const beta = outcome(transport.request(read(BETA, 'b')));
    answerAtOnce = true;
    answerAll();
    expect(await Promise.all([...admitted, beta])).toEqual(Array(67).fill({ ok: true }));
    expect(from(ALPHA).map((arrival) => arrival.path)).not.toContain('/items/extra');
  });

  it('counts the calls that waited, those refused for a full queue and those left unsent too late, and how many wait now, naming no caller', async () => {
    const registry = new Registry();
    const { transport } = transportFor({ timeoutMs: 600, maxWaitingPerCaller: 2, observeGate: createConnectionGateMetrics(registry, 'held') });
    const scraped = async () => {
      const text = await registry.metrics();
      const value = (name: string) => Number(new RegExp(`^held_upstream_connection_${name}\\{service="held"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      return { text, waited: value('waited_total'), queueFull: value('queue_full_total'), tooLate: value('too_late_total'), waiting: value('waiting') };
    };
    // Two in flight, two waiting, the fifth refused at once.
    const calls = [1, 2, 3, 4, 5].map((id) => outcome(transport.request(read(ALPHA, id))));
    await waitUntil(() => arrivals.length === 2, () => 'two calls');
    expect(await calls[4]).toMatchObject({ ok: false, code: 'RATE_LIMITED' });
    const during = await scraped();
    expect(during).toMatchObject({ waited: 2, queueFull: 1, tooLate: 0, waiting: 2 });
    expect(during.text).not.toContain(ALPHA);
    // Past half the deadline: the two waiting are refused unsent when the connections come free.
    await sleep(400);
    answerAll();
    expect((await Promise.all(calls.slice(2, 4))).map((refused) => refused.ok || refused.code)).toEqual(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
    expect(await scraped()).toMatchObject({ waited: 2, queueFull: 1, tooLate: 2, waiting: 0 });
    expect(arrivals).toHaveLength(2);
  });

  it('keeps a download\'s connection counted until its body closes', async () => {
    const { transport } = transportFor();
    const files = await Promise.all([1, 2].map((id) => transport.stream(read(ALPHA, id, { path: `/files/${id}`, accept: 'application/pdf' }))));
    const next = outcome(transport.request(read(ALPHA, 3)));
    await sleep(100);
    expect(from(ALPHA)).toHaveLength(2);
    files[0]!.body.destroy();
    await waitUntil(() => from(ALPHA).length === 3, () => 'the call after the closed download');
    answerAll();
    expect(await next).toEqual({ ok: true });
    files[1]!.body.destroy();
  });

  it('does not count against the service a call sent with less than half its deadline left that then timed out; one sent with its whole deadline still counts', async () => {
    // Pacing held the late call for most of its deadline: the service had 200 of its 600 ms.
    const pace = async (call: RestCall) => {
      if (call.operation === 'late') await sleep(400);
      return () => {};
    };
    const { transport, breaker } = transportFor({ timeoutMs: 600, pace });
    const late = await outcome(transport.request(read(ALPHA, 'late', { operation: 'late' })));
    expect(late).toMatchObject({ ok: false, code: 'UPSTREAM_UNAVAILABLE' });
    expect(late.ok || late.message).toMatch(/^held is unavailable: no answer within 600 ms \(it was sent \d+ ms late, after waiting its turn\)$/);
    expect(from(ALPHA)).toHaveLength(1);
    expect(breaker.state()).toBe('closed');

    const silent = await outcome(transport.request(read(ALPHA, 'silent')));
    expect(silent).toMatchObject({ ok: false, code: 'UPSTREAM_UNAVAILABLE', message: 'held is unavailable: no answer within 600 ms' });
    expect(breaker.state()).toBe('open');
  });
});
