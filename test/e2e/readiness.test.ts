import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { listen } from '../../lib/http.ts';
import { SERVICES } from '../../lib/services.ts';
import { testLogger } from '../support/logs.ts';

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
    afterAll(async () => {
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
});
