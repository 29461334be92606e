import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { DEMO_TOKEN as DASHBOARDS_DEMO_TOKEN } from '../../emulators/dashboards/data.ts';
import { SERVICES, emulatedEnvOf } from '../../stack/services.ts';
import { knownSecrets } from '../support/logs.ts';
import { ONE_PROCESS_RUNTIME_FLAGS } from '../../bench/processes.ts';
import { spawnMain } from '../support/mainProcess.ts';
import { startTestStack } from '../support/stack.ts';
import { refusesConnections, waitUntil } from '../support/waitFor.ts';

const { stack, emulator } = await startTestStack();
/** How the benchmark's launcher finds where a main listens. */
const LISTENING = /^[^{].*? on (https?:\/\/[^\s)]+)/m;

/** This file's emulators as the real services, set as an operator sets them; every port chosen by the system. */
const upstreams: Record<string, string> = Object.fromEntries(
  SERVICES.flatMap((service) => {
    const emulatorUrl = stack.services.find((started) => started.name === service.name)!.emulatorUrl!;
    return [[service.env.apiUrl, emulatorUrl], [service.env.subgraphPort, '0'], ...Object.entries(emulatedEnvOf(service, emulatorUrl))];
  }),
);

interface OneProcess {
  kill(signal: NodeJS.Signals): void;
  output(): string;
  hasExited(): boolean;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

const children: OneProcess[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
});

/** `stack/main.ts` as the deployment runs it: its own process, its own node flags, no test runner's NODE_ENV, LOG_LEVEL or upstreams. */
function startOneProcess(env: Record<string, string>): OneProcess {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV' && name !== 'LOG_LEVEL' && !name.endsWith('_API_URL')));
  const { child, output } = spawnMain([...ONE_PROCESS_RUNTIME_FLAGS, '--import', 'tsx', 'stack/main.ts'], { ...inherited, GATEWAY_PORT: '0', ...env });
  const started: OneProcess = {
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    output,
    hasExited: () => child.exitCode !== null || child.signalCode !== null,
    exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>,
  };
  children.push(started);
  return started;
}

/** The JSON log lines the process wrote in full, in order. */
const logLines = (output: string) =>
  output
    .slice(0, output.lastIndexOf('\n'))
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { server?: string; msg?: string; url?: string; graceMs?: number });

const drainSettings = { GATEWAY_DRAIN_DELAY_MS: '0', GATEWAY_SHUTDOWN_GRACE_MS: '20000', SUBGRAPH_DRAIN_DELAY_MS: '0', SUBGRAPH_SHUTDOWN_GRACE_MS: '19000' };
// Started together: loading the code is most of each one's start.
const graph = startOneProcess({ ...upstreams, ...drainSettings });
const missing = startOneProcess(Object.fromEntries(Object.entries(upstreams).filter(([name]) => name !== 'MARKETPLACE_API_URL' && name !== 'IMPORTS_API_URL')));
await waitUntil(() => LISTENING.test(graph.output()) || graph.hasExited(), () => `stack/main.ts to print where it listens (${graph.output()})`, 30_000);
const graphqlUrl = LISTENING.exec(graph.output())?.[1];
if (!graphqlUrl) throw new Error(`stack/main.ts did not start: ${graph.output()}`);

const credentials = { 'x-recognition-token': DEMO_TOKENS.member, 'x-dashboards-token': DASHBOARDS_DEMO_TOKEN };
const query = '{ redemption(id: "rd_001") { id state } dashboard(slug: "api-health") { name } }';
const ask = () => fetch(graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...credentials }, body: JSON.stringify({ query }) });

describe('the one-process deployment (stack/main.ts)', () => {
  it('prints one plain line naming the gateway first and every subgraph, and logs at info as the separate mains do', async () => {
    expect(graphqlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    const banner = graph.output().split('\n').filter((line) => line !== '' && !line.startsWith('{'));
    expect(banner).toEqual([`gateway on ${graphqlUrl} (one process with the subgraphs ${SERVICES.map((service) => service.name).join(', ')})`]);
    await waitUntil(() => logLines(graph.output()).filter((line) => line.msg?.endsWith('subgraph listening')).length === SERVICES.length, () => 'every subgraph to log where it listens');
    // Lines leave the process in batches at most 250 ms apart: the gateway's, written last, may come a batch later.
    const parts = new Set(['gateway', ...SERVICES.map((service) => `${service.name}-subgraph`)]);
    await waitUntil(() => logLines(graph.output()).some((line) => line.server === 'gateway'), () => 'the gateway to log at info');
    expect(new Set(logLines(graph.output()).map((line) => line.server))).toEqual(parts);
  });

  it('answers the emulators\' data, each service\'s credential reaching its own upstream only, with no demo credential preset in Sandbox', async () => {
    const recognition = emulator('recognition');
    const dashboards = emulator('dashboards');
    await recognition.clearRequests();
    await dashboards.clearRequests();
    const answer = await ask();
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ data: { redemption: { id: 'rd_001', state: expect.any(String) }, dashboard: { name: 'API health' } } });

    const [read] = (await recognition.requests()).filter((request) => request.path.startsWith('/api/v1/redemptions'));
    expect(read).toMatchObject({ method: 'GET', status: 200, query: { access_token: expect.any(String) } });
    expect(read!.headers).not.toContain('service-token');
    const [dashboard] = (await dashboards.requests()).filter((request) => request.path.includes('dashboards'));
    expect(dashboard!.status).toBe(200);
    expect(dashboard!.headers).toContain('service-token');
    expect(dashboard!.query).not.toHaveProperty('access_token');

    const sandbox = await (await fetch(graphqlUrl, { headers: { accept: 'text/html' } })).text();
    expect(sandbox).toContain('sharedHeaders');
    for (const secret of knownSecrets) expect(sandbox.includes(secret), 'a demo credential preset in Sandbox').toBe(false);
  });

  it('on SIGTERM drains the gateway first (the request in flight answered in full), then the subgraphs, and exits 0', async () => {
    const subgraphUrls = logLines(graph.output()).filter((line) => line.msg?.endsWith('subgraph listening')).map((line) => line.url!);
    const recognition = emulator('recognition');
    await recognition.fault({ path: '/api/v1/redemptions/*', latencyMs: 1000, times: 1 });
    await recognition.clearRequests();
    const inFlight = ask();
    await waitUntil(async () => (await recognition.requests()).some((request) => request.path.startsWith('/api/v1/redemptions/')), () => 'the upstream call to start');

    graph.kill('SIGTERM');
    await refusesConnections(new URL(graphqlUrl).origin);
    // The gateway still waits on its request, which needs a subgraph: every subgraph still serves.
    for (const url of subgraphUrls) expect((await fetch(url.replace(/\/graphql$/, '/health'))).status).toBe(200);

    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ data: { redemption: { id: 'rd_001', state: expect.any(String) }, dashboard: { name: 'API health' } } });
    expect(await graph.exited).toEqual([0, null]);
    for (const url of subgraphUrls) await refusesConnections(new URL(url).origin);

    const lines = logLines(graph.output());
    const gatewayDrained = lines.findIndex((line) => line.server === 'gateway' && line.msg === 'drained: closing');
    const subgraphsDraining = lines.flatMap((line, index) => (line.server?.endsWith('-subgraph') && line.msg?.startsWith('draining') ? [{ index, graceMs: line.graceMs }] : []));
    expect(gatewayDrained).toBeGreaterThanOrEqual(0);
    expect(subgraphsDraining).toHaveLength(SERVICES.length);
    for (const draining of subgraphsDraining) expect(draining).toEqual({ index: expect.any(Number), graceMs: 19000 });
    expect(Math.min(...subgraphsDraining.map((draining) => draining.index))).toBeGreaterThan(gatewayDrained);
  });

  it('refuses to start without every <SERVICE>_API_URL, in one line naming each missing one and `npm start`, with no stack trace', async () => {
    const [code] = await missing.exited;
    expect(code).not.toBe(0);
    const lines = missing.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('MARKETPLACE_API_URL');
    expect(lines[0]).toContain('IMPORTS_API_URL');
    expect(lines[0]).toContain('npm start');
    for (const service of SERVICES.filter((service) => !['marketplace', 'imports'].includes(service.name))) expect(lines[0]).not.toContain(service.env.apiUrl);
    expect(missing.output()).not.toMatch(/^\s+at /m);
    expect(missing.output()).not.toMatch(LISTENING);
  });
});
