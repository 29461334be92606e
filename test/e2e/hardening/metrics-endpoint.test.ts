import http from 'node:http';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMetricsEndpoint } from '../../../lib/metricsEndpoint.ts';
import { listen } from '../../../lib/http.ts';
import { knownSecrets } from '../../support/logs.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * `/metrics` is on the public port: rendering it costs a millisecond or two of CPU, so a client
 * asking in a loop must not get a render each time, and an operator may require a token.
 */
describe('the /metrics endpoint', () => {
  it('renders at most its bound in a second, however often it is asked, and each new value within a second', async () => {
    let renders = 0;
    let clock = 1_000_000;
    // While set, a render waits for it: the test decides when a render ends, not a timer.
    let renderGate: Promise<void> | undefined;
    const registry = {
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      metrics: async () => {
        const text = `renders ${++renders}\n`;
        await renderGate;
        return text;
      },
    } as Parameters<typeof createMetricsEndpoint>[0];
    const endpoint = createMetricsEndpoint(registry, { maxRendersPerSecond: 5, now: () => clock });
    let received = 0;
    const server = http.createServer((req, res) => {
      received += 1;
      void endpoint(req, res);
    });
    const started = await listen(server, 0);
    onTestFinished(() => started.close());
    const scrape = async () => (await fetch(`${started.url}/metrics`)).text();

    const bodies: string[] = [];
    for (let n = 0; n < 50; n += 1) bodies.push(await scrape());
    expect(renders).toBe(5);
    expect(bodies.slice(0, 5)).toEqual(['renders 1\n', 'renders 2\n', 'renders 3\n', 'renders 4\n', 'renders 5\n']);
    expect(new Set(bodies.slice(5))).toEqual(new Set(['renders 5\n']));
    // Fifty at once, all arrived while a render is still running, share one.
    clock += 1000;
    let endRender!: () => void;
    renderGate = new Promise((resolve) => (endRender = resolve));
    const receivedBefore = received;
    const together = Promise.all(Array.from({ length: 50 }, scrape));
    await vi.waitFor(() => expect(received - receivedBefore).toBe(50), { timeout: 10_000 });
    endRender();
    renderGate = undefined;
    expect(renders).toBe(6);
    expect(new Set(await together)).toEqual(new Set(['renders 6\n']));
    // A second on, a fresh render.
    clock += 1000;
    expect(await scrape()).toBe('renders 7\n');
  });

  describe('with METRICS_TOKEN', async () => {
    const TOKEN = 'metrics-token-5d1e8b2a9c4f7e03';
    knownSecrets.add(TOKEN);
    const t = await startTestStack({ METRICS_TOKEN: TOKEN });
    const gatewayMetrics = `${new URL(t.graphqlUrl).origin}/metrics`;
    const subgraphMetrics = `${new URL(t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl).origin}/metrics`;

    it('answers 401 without the token or with another one, on the gateway and on a subgraph', async () => {
      for (const url of [gatewayMetrics, subgraphMetrics]) {
        for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }] as Record<string, string>[]) {
          const response = await fetch(url, { headers });
          expect(response.status).toBe(401);
          expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
          const text = await response.text();
          expect(text).not.toContain(TOKEN);
          expect(text).not.toContain('_total');
        }
      }
    });

    it('serves the metrics to the bearer of the token', async () => {
      const gateway = await fetch(gatewayMetrics, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(gateway.status).toBe(200);
      expect(await gateway.text()).toContain('gateway_operations_total');
      const subgraph = await fetch(subgraphMetrics, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(subgraph.status).toBe(200);
      expect(await subgraph.text()).toContain('recognition_upstream_calls_total');
    });

    it('leaves the other routes as they were', async () => {
      expect((await fetch(`${new URL(t.graphqlUrl).origin}/health`)).status).toBe(200);
    });
  });
});
