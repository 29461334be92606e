import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';
import { scrapeMetrics } from '../support/metrics.ts';
import { waitUntil } from '../support/waitFor.ts';

// The connection gate's share and queue are settings of each service (`<SERVICE>_CONNECTIONS_PER_CALLER`,
// `<SERVICE>_MAX_WAITING_PER_CALLER`), and its waits and refusals are on the subgraph's /metrics.
// Two connections per caller and one call waiting: a slowed emulator shows, in its request log,
// which calls went and which waited. The slowed answers come well inside half the deadline.
const LATENCY_MS = 700;
const t = await startTestStack({ RECOGNITION_CONNECTIONS_PER_CALLER: '2', RECOGNITION_MAX_WAITING_PER_CALLER: '1', RECOGNITION_TIMEOUT_MS: '5000' });
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl.replace(/\/graphql$/, '');
const root = new URL('../../', import.meta.url).pathname;

type Redemptions = GraphQLResult<{ redemptions: (null | { id: string })[] }>;
const REDEMPTIONS = 'query($ids: [ID!]!) { redemptions(ids: $ids) { id } }';
const lookups = (token: string, ids: string[]) => t.gql(REDEMPTIONS, { variables: { ids }, headers: { 'x-recognition-token': token } }) as Promise<Redemptions>;

const redemptionCalls = async () => (await emulator.requests()).filter((request) => request.path.startsWith('/api/v1/redemptions/'));
const metrics = () => scrapeMetrics(`${subgraphUrl}/metrics`);
/** A sample's value, 0 when the series is not shown (a counter never counted). */
const sample = (text: string, name: string) => Number(new RegExp(`^${name}\\{service="recognition"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);

async function slowed() {
  await emulator.reset();
  await emulator.fault({ path: '/api/v1/redemptions/*', latencyMs: LATENCY_MS });
}

describe('the connection gate as a setting of each service', () => {
  it('holds one credential to RECOGNITION_CONNECTIONS_PER_CALLER connections: its third call waits, another credential\'s call goes at once', async () => {
    await slowed();
    const before = await metrics();
    const admin = lookups(DEMO_TOKENS.admin, ['rd_gate_1', 'rd_gate_2', 'rd_gate_3']);
    await waitUntil(async () => (await redemptionCalls()).length >= 2, () => 'two of the admin\'s lookups');
    // Well before the slowed answers: the third lookup has not been sent, it waits.
    await sleep(LATENCY_MS / 4);
    expect(await redemptionCalls()).toHaveLength(2);
    const during = await metrics();
    expect(sample(during, 'recognition_upstream_connection_waiting')).toBe(1);
    expect(sample(during, 'recognition_upstream_connection_waited_total') - sample(before, 'recognition_upstream_connection_waited_total')).toBe(1);

    const member = await t.gql('{ rewardCatalog { name } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    expect(member.errors).toBeUndefined();
    const log = await emulator.requests();
    const memberAt = log.findIndex((request) => request.path === '/api/v1/rewards');
    expect(memberAt).toBeGreaterThanOrEqual(0);
    expect(log.slice(0, memberAt).filter((request) => request.path.startsWith('/api/v1/redemptions/'))).toHaveLength(2);

    const result = await admin;
    expect(result).toEqual({ data: { redemptions: [null, null, null] } });
    expect(await redemptionCalls()).toHaveLength(3);
    expect(sample(await metrics(), 'recognition_upstream_connection_waiting')).toBe(0);
  });

  it('refuses, RATE_LIMITED and unsent, a call past RECOGNITION_MAX_WAITING_PER_CALLER, and counts it', async () => {
    await slowed();
    const before = await metrics();
    // Four lookups as four fields: two go, one waits, the fourth is refused.
    const result = await t.gql('{ a: redemption(id: "rd_gate_1") { id } b: redemption(id: "rd_gate_2") { id } c: redemption(id: "rd_gate_3") { id } d: redemption(id: "rd_gate_4") { id } }', {
      headers: { 'x-recognition-token': DEMO_TOKENS.admin },
    });
    expect(result.data).toEqual({ a: null, b: null, c: null, d: null });
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]).toMatchObject({
      path: ['d'],
      message: 'recognition was not called: this caller already has 1 call waiting for a connection, the most it may have (2 in flight; one caller may hold 2 of the 64 connections at once)',
      extensions: { code: 'RATE_LIMITED', service: 'recognition' },
    });
    expect(await redemptionCalls()).toHaveLength(3);
    const after = await metrics();
    expect(sample(after, 'recognition_upstream_connection_queue_full_total') - sample(before, 'recognition_upstream_connection_queue_full_total')).toBe(1);
    expect(sample(after, 'recognition_upstream_connection_waited_total') - sample(before, 'recognition_upstream_connection_waited_total')).toBe(1);
  });

  it('names no caller on /metrics while a credential waits: neither the credential, nor any part of it, nor its key', async () => {
    await slowed();
    const credential = DEMO_TOKENS.readOnly;
    const queued = lookups(credential, ['rd_gate_5', 'rd_gate_6', 'rd_gate_7']);
    await waitUntil(async () => (await redemptionCalls()).length >= 2, () => 'two of the read-only key\'s lookups');
    await sleep(LATENCY_MS / 4);
    const text = await metrics();
    expect(sample(text, 'recognition_upstream_connection_waiting')).toBe(1);
    for (let start = 0; start + 6 <= credential.length; start += 1) expect(text).not.toContain(credential.slice(start, start + 6));
    // The gate knows a caller by an HMAC (43 characters of base64url): no label holds one.
    for (const [, value] of text.matchAll(/="([^"]*)"/g)) expect(value).not.toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const gateLines = text.split('\n').filter((line) => line.startsWith('recognition_upstream_connection_'));
    expect(gateLines.length).toBeGreaterThan(0);
    for (const line of gateLines) expect(line).toMatch(/^recognition_upstream_connection_[a-z_]+\{service="recognition"\} \d+$/);
    expect((await queued).data?.redemptions).toEqual([null, null, null]);
  });
});

describe('a bad share or queue setting', () => {
  /** The subgraph as its own process, as deployed: what it prints before it exits. */
  async function startRefused(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'subgraphs/recognition/main.ts'], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'warn', RECOGNITION_SUBGRAPH_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill(), 30_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    return { code, output };
  }

  it('stops the subgraph at start with a message naming the setting', { timeout: 60_000 }, async () => {
    const [share, queue] = await Promise.all([startRefused({ RECOGNITION_CONNECTIONS_PER_CALLER: '65' }), startRefused({ RECOGNITION_MAX_WAITING_PER_CALLER: 'lots' })]);
    expect(share.code).toBe(1);
    expect(share.output).toContain('Configuration error: RECOGNITION_CONNECTIONS_PER_CALLER must be a whole number from 1 to 64; got "65".\n');
    expect(queue.code).toBe(1);
    expect(queue.output).toContain('Configuration error: RECOGNITION_MAX_WAITING_PER_CALLER must be a whole number from 0 to 100000; got "lots".\n');
  });
});
