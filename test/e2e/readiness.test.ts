import http from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { listen } from '../../lib/http.ts';
import { SERVICES } from '../../lib/services.ts';
import { testLogger } from '../support/logs.ts';
import { flood } from '../support/flood.ts';

describe('/ready', () => {
  it('asks the subgraphs at most once a second however often it is called', async () => {
    let asked = 0;
    const subgraph = await listen(
      http.createServer((req, res) => {
        asked += 1;
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"__typename":"Query"}}');
      }),
      0,
    );
    const subgraphUrls = Object.fromEntries(SERVICES.map((service) => [service.name, `${subgraph.url}/graphql`]));
    const gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls }), testLogger('gateway'));
    onTestFinished(async () => {
      await gateway.close();
      await subgraph.close();
    });
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${gateway.url}/ready`)));
    const seconds = Math.ceil((performance.now() - started) / 1000);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    // One check of every subgraph per second at most, shared by the fifty calls (a loaded machine
    // may spread them over several seconds; asking on every call would be fifty checks).
    expect(asked).toBeGreaterThanOrEqual(SERVICES.length);
    expect(asked).toBeLessThanOrEqual(SERVICES.length * seconds);
    expect(seconds).toBeLessThan(50);
  });

  it('counts a subgraph whose answer to the check never ends as down, reading no more than MAX_SUBGRAPH_RESPONSE_BYTES of it', async () => {
    const CAP = 64 * 1024;
    let sent = 0;
    // A subgraph that answers the check with a body that goes on for as long as it is read.
    const flooding = await listen(
      http.createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        flood(res, (bytes) => (sent += bytes));
      }),
      0,
    );
    const healthy = await listen(
      http.createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"__typename":"Query"}}');
      }),
      0,
    );
    const [first, ...others] = SERVICES;
    const subgraphUrls = { [first!.name]: `${flooding.url}/graphql`, ...Object.fromEntries(others.map((service) => [service.name, `${healthy.url}/graphql`])) };
    const gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls, maxSubgraphResponseBytes: CAP }), testLogger('gateway'));
    try {
      const answer = await fetch(`${gateway.url}/ready`);
      expect(answer.status).toBe(503);
      expect(((await answer.json()) as { subgraphs: Record<string, string> }).subgraphs).toMatchObject({ [first!.name]: 'down', [others[0]!.name]: 'up' });
      // Cut off near the cap: the flood was not read to its end (64 MiB) nor for its 2 s deadline.
      expect(sent).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await gateway.close();
      await Promise.all([flooding.close(), healthy.close()]);
    }
  });
});
