import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { listen } from '../../lib/http.ts';
import { browserAvailable, launchBrowser } from '../support/browser.ts';
import { startGatewayOver, startTestStack } from '../support/stack.ts';

const t = await startTestStack();
/** A frontend app's origin: a page served from another port than the gateway's. */
const app = await listen(http.createServer((_req, res) => res.end('<!doctype html><title>app</title>')), 0, '127.0.0.1');
afterAll(() => app.close());
const OTHER = 'http://127.0.0.1:9';
const gateway = await startGatewayOver(t.stack, { CORS_ORIGINS: `${app.url}, https://studio.apollographql.com` }, 'cors');
const anyOrigin = await startGatewayOver(t.stack, { CORS_ORIGINS: '*' }, 'cors-any');
const QUERY = JSON.stringify({ query: '{ reward(id: "rw_coffee_5") { name } }' });
const credential = { 'x-recognition-token': DEMO_TOKENS.member };

const preflight = (url: string, origin: string) =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-recognition-token' } });
const post = (url: string, headers: Record<string, string>) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...credential, ...headers }, body: QUERY });

describe('CORS_ORIGINS', () => {
  it('allows Apollo Studio by default, and refuses anything that is not an origin, naming the variable', () => {
    expect(readGatewayConfig({}).cors).toEqual({ origins: new Set(['https://studio.apollographql.com']) });
    expect(readGatewayConfig({ CORS_ORIGINS: '' }).cors).toEqual({ origins: new Set() });
    expect(readGatewayConfig({ CORS_ORIGINS: 'HTTPS://App.Example.com:443' }).cors).toEqual({ origins: new Set(['https://app.example.com']) });
    for (const bad of ['https://app.example.com/', 'https://app.example.com/path', 'app.example.com', 'ftp://app.example.com', 'https://user@app.example.com', 'null', '*, https://a.example']) {
      expect(() => readGatewayConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
  });

  it('answers an allowed origin’s preflight with the methods, the headers it asked for and how long to keep them', async () => {
    const response = await preflight(gateway.graphqlUrl, app.url);
    expect(response.status).toBe(204);
    expect(Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'))).toEqual({
      'access-control-allow-origin': app.url,
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'content-type, x-recognition-token',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('names the allowed origin on the answers, fast path, SSE and errors alike', async () => {
    for (let round = 0; round < 2; round += 1) {
      const answer = await post(gateway.graphqlUrl, { origin: app.url });
      expect(await answer.json()).toEqual({ data: { reward: { name: expect.any(String) } } });
      expect([answer.headers.get('access-control-allow-origin'), answer.headers.get('access-control-expose-headers')]).toEqual([app.url, 'retry-after, www-authenticate']);
      // Beside `Accept-Encoding`, which compression adds.
      expect(answer.headers.get('vary')?.split(/,\s*/)).toContain('Origin');
    }
    const refused = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', origin: app.url }, body: '{' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe(app.url);
    const stream = await post(gateway.graphqlUrl, { origin: app.url, accept: 'text/event-stream' });
    expect(stream.headers.get('access-control-allow-origin')).toBe(app.url);
    await stream.body?.cancel();
  });

  it('refuses another origin’s preflight with FORBIDDEN and gives its requests no CORS header', async () => {
    const response = await preflight(gateway.graphqlUrl, OTHER);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ errors: [{ message: expect.stringContaining('CORS_ORIGINS'), extensions: { code: 'FORBIDDEN' } }] });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const answer = await post(gateway.graphqlUrl, { origin: OTHER });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const noOrigin = await post(gateway.graphqlUrl, {});
    expect(noOrigin.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('with *, allows any origin without naming it and without Vary', async () => {
    const response = await preflight(anyOrigin.graphqlUrl, OTHER);
    expect([response.status, response.headers.get('access-control-allow-origin'), response.headers.get('vary')]).toEqual([204, '*', null]);
    // Header names only: anything else is not echoed back as allowed.
    const odd = await fetch(anyOrigin.graphqlUrl, { method: 'OPTIONS', headers: { origin: OTHER, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-a; drop table' } });
    expect([odd.status, odd.headers.get('access-control-allow-headers')]).toEqual([204, null]);
  });
});

describe.skipIf(!browserAvailable())('a frontend app in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  /** Runs the app's fetch of the graph from a page of the app's origin: the browser applies CORS. */
  const fetchFromApp = async (graphqlUrl: string) => {
    const page = await browser.newPage();
    try {
      await page.goto(app.url);
      return await page.evaluate(
        async ({ url, body, headers }) => {
          try {
            const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
            return { status: response.status, body: (await response.json()) as unknown };
          } catch (error) {
            return { blocked: String(error) };
          }
        },
        { url: graphqlUrl, body: QUERY, headers: credential },
      );
    } finally {
      await page.close();
    }
  };

  it('queries the graph from an allowed origin, its credential header preflighted', async () => {
    expect(await fetchFromApp(gateway.graphqlUrl)).toEqual({ status: 200, body: { data: { reward: { name: expect.any(String) } } } });
  });

  it('is kept from reading the graph from an origin the gateway does not allow', async () => {
    const closed = await startGatewayOver(t.stack, { CORS_ORIGINS: OTHER }, 'cors-closed');
    expect(await fetchFromApp(closed.graphqlUrl)).toEqual({ blocked: expect.stringContaining('Failed to fetch') });
  });
});
