import http from 'node:http';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../../lib/http.ts';
import { createRestTransport } from '../../subgraphs/kit/transport.ts';

/**
 * How the transport reads an answer that arrives in pieces, breaks off, or never finishes: the
 * cases the emulators cannot stage, served by a bare HTTP server of the test's own.
 */
type Behaviour = (res: http.ServerResponse) => void;
const behaviours = new Map<string, Behaviour[]>();
const seen: string[] = [];
const server = http.createServer((req, res) => {
  const path = req.url!.split('?')[0]!;
  seen.push(`${req.method} ${path}`);
  const queue = behaviours.get(path) ?? [];
  // Each behaviour is used once; the last one stays for every later request.
  const behaviour = queue.length > 1 ? queue.shift()! : queue[0];
  if (behaviour) behaviour(res);
  else res.writeHead(404).end();
});
const started = await listen(server, 0);
const transport = createRestTransport({ service: 'stub', baseUrl: `${started.url}/api`, timeoutMs: 400, backoffMs: 5, connections: 1 });

afterAll(async () => {
  await transport.close();
  await started.close();
});

beforeEach(() => {
  behaviours.clear();
  seen.length = 0;
});

const serve = (path: string, ...queue: Behaviour[]) => behaviours.set(`/api${path}`, queue);
const whole: Behaviour = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"a","name":"whole"}');
/** Headers and half the body, then the connection is cut. */
const brokenOff: Behaviour = (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
  res.write('{"id":"a","na');
  setTimeout(() => res.socket?.destroy(), 10);
};
/** Headers and half the body, then nothing more. */
const stalled: Behaviour = (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
  res.write('{"id":"a","na');
};

describe('the transport reading an answer', () => {
  it('puts together a body sent in many pieces, and drops a byte order mark', async () => {
    serve('/pieces', (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-page': '2' });
      const text = `\uFEFF${JSON.stringify({ id: 'a', name: 'é'.repeat(5000) })}`;
      const bytes = Buffer.from(text);
      // Split inside a two-byte character: decoding must happen once the body is whole.
      res.write(bytes.subarray(0, 1001));
      setTimeout(() => res.end(bytes.subarray(1001)), 5);
    });
    const answer = await transport.request({ operation: 'pieces', method: 'GET', path: '/pieces' });
    expect(answer.body).toEqual({ id: 'a', name: 'é'.repeat(5000) });
    expect(answer.headers['x-page']).toBe('2');
  });

  it('names headers in lower case and folds a repeated one, as HTTP does', async () => {
    serve('/headers', (res) => {
      // Raw header lines: the names' case as sent, and `Link` twice.
      res.setHeader('X-Page-Token', 'abc');
      res.setHeader('Link', ['<https://x.example/?page=2>; rel="next"', '<https://x.example/?page=9>; rel="last"']);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const folded = await transport.request({ operation: 'headers', method: 'GET', path: '/headers' });
    expect(folded.headers['x-page-token']).toBe('abc');
    expect(folded.headers['link']).toBe('<https://x.example/?page=2>; rel="next", <https://x.example/?page=9>; rel="last"');
    serve('/plain', (res) => res.writeHead(200, { 'Content-Type': 'application/json', 'X-Count': '3' }).end('{}'));
    const plain = await transport.request({ operation: 'plain', method: 'GET', path: '/plain' });
    expect(plain.headers['x-count']).toBe('3');
    expect(Object.values(plain.headers).every((value) => typeof value === 'string')).toBe(true);
  });

  it('asks again when the body of a read breaks off, and gets it whole', async () => {
    serve('/reward', brokenOff, whole);
    const answer = await transport.request({ operation: 'reward', method: 'GET', path: '/reward' });
    expect(answer.body).toEqual({ id: 'a', name: 'whole' });
    expect(seen).toEqual(['GET /api/reward', 'GET /api/reward']);
  });

  it('reports a body that keeps breaking off as UPSTREAM_UNAVAILABLE, after its retries', async () => {
    serve('/reward', brokenOff);
    const failure = await transport.request({ operation: 'reward', method: 'GET', path: '/reward' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ message: expect.stringContaining('the answer broke off'), extensions: { code: 'UPSTREAM_UNAVAILABLE', service: 'stub' } });
    expect(seen).toHaveLength(3);
  });

  it('never repeats a POST whose answer broke off', async () => {
    serve('/webhooks', brokenOff);
    const failure = await transport.request({ operation: 'create', method: 'POST', path: '/webhooks', body: { json: { url: 'https://x.example' } } }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(seen).toEqual(['POST /api/webhooks']);
  });

  it('cuts off a body that stops arriving at the deadline', async () => {
    serve('/slow', stalled);
    const before = Date.now();
    const failure = await transport.request({ operation: 'slow', method: 'GET', path: '/slow' }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ message: expect.stringContaining('no answer within 400 ms'), extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(Date.now() - before).toBeLessThan(1000);
  });

  it('cuts off at its own deadline a call still queued behind a slower one for the only socket', async () => {
    serve('/slow', stalled);
    serve('/reward', whole);
    const before = Date.now();
    const slow = transport.request({ operation: 'slow', method: 'GET', path: '/slow', timeoutMs: 1500 }).catch((error: unknown) => error);
    const queued = await transport.request({ operation: 'reward', method: 'GET', path: '/reward' }).catch((error: unknown) => error);
    // Given up at its own 400 ms, not when the socket came free at 1,500.
    expect(Date.now() - before).toBeLessThan(1000);
    expect(queued).toMatchObject({ message: expect.stringContaining('no answer within 400 ms'), extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(await slow).toMatchObject({ message: expect.stringContaining('no answer within 1500 ms') });
    // The queued call never reached the upstream, even once the socket was free.
    expect(seen).toEqual(['GET /api/slow']);
  });
});
