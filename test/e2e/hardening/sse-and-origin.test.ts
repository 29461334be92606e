import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../../emulators/marketplace/data.ts';
import { readGatewayConfig } from '../../../gateway/config.ts';
import { startGateway } from '../../../gateway/server.ts';
import { testLogger } from '../../support/logs.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * Issue 14, items 4 and 13. SSE single connection mode is off: a reservation or a stream token is
 * refused in words and leaves nothing behind (no orphan to queue events for, none counted in
 * /metrics). Download links follow `X-Forwarded-*` only from a configured proxy.
 */
const t = await startTestStack();
const subgraphUrls = Object.fromEntries(t.stack.services.map((service) => [service.name, service.subgraphUrl]));
const behindProxy = await startGateway(readGatewayConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1' }, { port: 0, subgraphUrls }), testLogger('proxied-gateway'));
afterAll(() => behindProxy.close());
const seller = { 'x-marketplace-email': DEMO_CREDENTIALS.email, 'x-marketplace-api-key': DEMO_CREDENTIALS.apiKey, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };

describe('SSE single connection mode is off', () => {
  it('refuses reservations, stream tokens in a header or the URL, and DELETE, with nothing left to count', async () => {
    const refusals = [
      await fetch(t.graphqlUrl, { method: 'PUT', headers: t.stack.demoHeaders }),
      await fetch(t.graphqlUrl, { method: 'DELETE', headers: t.stack.demoHeaders }),
      await fetch(t.graphqlUrl, {
        method: 'POST',
        headers: { ...t.stack.demoHeaders, 'content-type': 'application/json', 'x-graphql-event-stream-token': 'orphan' },
        body: JSON.stringify({ query: 'subscription { bonusCreated { id } }', extensions: { operationId: 'x' } }),
      }),
      await fetch(`${t.graphqlUrl}?token=orphan`, { headers: { ...t.stack.demoHeaders, accept: 'text/event-stream', 'apollo-require-preflight': 'true' } }),
    ];
    for (const response of refusals) {
      expect([400, 405]).toContain(response.status);
      expect(await response.json()).toMatchObject({ errors: [{ message: expect.stringMatching(/distinct connections mode only/), extensions: { code: 'BAD_REQUEST' } }] });
    }
    expect(t.stack.gateway.subscriptions.stats()).toMatchObject({ subscribers: 0, upstreams: 0 });
    expect(await (await fetch(`${t.stack.gateway.url}/metrics`)).text()).toMatch(/^gateway_subscription_subscribers 0$/m);
  });
});

/** Asks for a label PDF link with the given headers, as a raw request (so `Host` is ours to set). */
function linkVia(graphqlUrl: string, headers: Record<string, string>): Promise<string> {
  const body = JSON.stringify({ query: '{ labelGroup(id: "7001") { labelsPdf { url } } }' });
  return new Promise((resolve, reject) => {
    const req = request(graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...seller, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { labelGroup: { labelsPdf: { url: string } } } }).data.labelGroup.labelsPdf.url));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('download links and forwarded headers', () => {
  it('ignores X-Forwarded-Proto and X-Forwarded-Host from a peer that is not a configured proxy', async () => {
    const url = await linkVia(t.graphqlUrl, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
    expect(url.startsWith(`${t.stack.gateway.url}/downloads/marketplace/`)).toBe(true);
  });

  it('uses the socket’s own scheme with the Host the caller sent, when no proxy vouches for anything else', async () => {
    const url = await linkVia(t.graphqlUrl, { host: 'graph.example:8443', 'x-forwarded-proto': 'https' });
    expect(url.startsWith('http://graph.example:8443/downloads/marketplace/')).toBe(true);
  });

  it('believes a configured proxy (TRUSTED_PROXIES), taking the first value of each header', async () => {
    const url = await linkVia(behindProxy.graphqlUrl, { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'graph.example.com, internal' });
    expect(url.startsWith('https://graph.example.com/downloads/marketplace/')).toBe(true);
  });

  it('refuses a malformed TRUSTED_PROXIES at start, naming the variable', () => {
    expect(() => readGatewayConfig({ TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => readGatewayConfig({ TRUSTED_PROXIES: 'proxy.internal' })).toThrow(/TRUSTED_PROXIES/);
  });
});
