import http from 'node:http';
import { readGatewayConfig, type FastPaths, type GatewayConfig } from '../../gateway/config.ts';
import { startGateway, type StartedGateway } from '../../gateway/server.ts';
import { listen } from '../../lib/http.ts';
import { testLogger } from './logs.ts';

export interface StandInAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
  /** Sends the body a byte at a time, this many ms apart, never idle long enough for an idle timeout. */
  trickleMs?: number;
}

/** A gateway whose recognition subgraph is a stand-in answering whatever a test sets. */
export interface GatewayOverStandIn {
  gateway: StartedGateway;
  /** What the stand-in answers next; a test replaces it. */
  answer: StandInAnswer;
  /** What the stand-in was sent, in order; a test may empty it. */
  received: { headers: http.IncomingHttpHeaders; body: unknown }[];
  close(): Promise<void>;
}

/** The gateway's fast-path settings a test runs under, by name: every comparison with Apollo's path runs in each. */
export const FAST_PATH_MODES: readonly { mode: string; fastPaths: FastPaths }[] = [
  { mode: 'fast paths on', fastPaths: { singleFetch: true, passThrough: true } },
  { mode: 'GATEWAY_PASS_THROUGH=off', fastPaths: { singleFetch: true, passThrough: false } },
  // The pass-through serves only what the single-fetch shortcut planned: this turns both off.
  { mode: 'GATEWAY_SINGLE_FETCH=off', fastPaths: { singleFetch: false, passThrough: true } },
];

export async function startGatewayOverStandIn(logName: string, fastPaths: FastPaths = FAST_PATH_MODES[0]!.fastPaths, settings: Partial<Pick<GatewayConfig, 'maxSubgraphResponseBytes' | 'subgraphTimeoutMs'>> = {}): Promise<GatewayOverStandIn> {
  const stand: Pick<GatewayOverStandIn, 'answer' | 'received'> = { answer: { status: 200, body: '{"data":{"webhooks":[]}}' }, received: [] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      stand.received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const { status, body, headers, trickleMs } = stand.answer;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      if (trickleMs === undefined) return void res.end(body);
      let sent = 0;
      const drip = () => {
        if (res.destroyed) return;
        if (sent === body.length) return void res.end();
        res.write(body[sent++]!);
        setTimeout(drip, trickleMs);
      };
      drip();
    });
  });
  const subgraph = await listen(server, 0);
  const gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: `${subgraph.url}/graphql` }, fastPaths, ...settings }), testLogger(logName));
  return Object.assign(stand, {
    gateway,
    async close() {
      await gateway.close();
      await subgraph.close();
    },
  });
}
