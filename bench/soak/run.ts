import { readFileSync } from 'node:fs';
import { createClient as createWsClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { launchStack } from '../stack.ts';
import { ATTACKS, type AttackTarget } from './attacks.ts';

/**
 * `npm run soak`: the whole graph as separate processes (production settings, as `npm run bench`)
 * under a steady mix of queries, subscriptions, webhook events and, at a low rate, the attacks of
 * the hardening work; then each process's resident memory at the start and the end, and every
 * error seen. Not part of CI. Settings from the environment:
 * - `SOAK_DURATION_MS`: how long the mix runs. @default 600000 (ten minutes)
 * - `SOAK_QUERIES_PER_SECOND`: @default 20
 * - `SOAK_ATTACK_EVERY_MS`: one attack (in turn) this often. @default 3000
 * - `SOAK_EVENT_EVERY_MS`: one bonus given in the emulator (a webhook) this often. @default 1000
 * - `SOAK_SUBSCRIBERS`: graphql-ws subscribers held open all along. @default 20
 */
const number = (env: NodeJS.ProcessEnv, name: string, fallback: number) => {
  const value = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number; got "${env[name]}"`);
  return value;
};
const durationMs = number(process.env, 'SOAK_DURATION_MS', 600_000);
const queriesPerSecond = number(process.env, 'SOAK_QUERIES_PER_SECOND', 20);
const attackEveryMs = number(process.env, 'SOAK_ATTACK_EVERY_MS', 3000);
const eventEveryMs = number(process.env, 'SOAK_EVENT_EVERY_MS', 1000);
const subscriberCount = number(process.env, 'SOAK_SUBSCRIBERS', 20);
/** Memory is read once the processes have warmed up, and again at the end: the figure that must stay flat. */
const WARMUP_MS = Math.min(30_000, durationMs / 5);
const FLAT_WITHIN = 0.1;

const QUERIES = [
  { query: 'query Reward($id: ID!) { reward(id: $id) { id name displayPrice } }', variables: { id: 'rw_bookshop_25' } },
  { query: '{ rewardCatalog { name rewards { name } } }' },
  { query: 'query Redemptions($ids: [ID!]!) { redemptions(ids: $ids) { id state reward { name } } }', variables: { ids: ['rd_001', 'rd_002', 'rd_003', 'rd_004'] } },
  { query: '{ hashtagTrends { hashtag count } }' },
  { query: '{ redemption(id: "rd_404_none") { id } }' },
  { query: '{ teapot }' },
];

function rssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

const errors = new Map<string, number>();
const noteError = (kind: string) => errors.set(kind, (errors.get(kind) ?? 0) + 1);
const counts = { queries: 0, events: 0, deliveries: 0, attacks: 0, churned: 0 };

const stack = await launchStack();
const graphqlUrl = stack.graphqlUrl;
const gatewayOrigin = new URL(graphqlUrl).origin;
const recognition = stack.emulators.find((emulator) => emulator.service === 'recognition')!;
const headers = stack.demoHeaders;
// The attacks run as another caller, so the caps they meet never touch the steady subscribers.
const attacker: AttackTarget = { graphqlUrl, headers: { ...headers, 'x-recognition-token': DEMO_TOKENS.member } };
const stopAt = Date.now() + durationMs;
const clients: Client[] = [];

function subscribe(tag: string): () => void {
  const client = createWsClient({ url: graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: headers, retryAttempts: 0 });
  clients.push(client);
  const unsubscribe = client.subscribe<{ bonusCreated: { id: string } }>(
    { query: 'subscription ($tag: String) { bonusCreated(filter: { hashtag: $tag }) { id bonus { id amount giver { displayName } } } }', variables: { tag } },
    {
      next: (result) => (result.errors ? noteError(`subscription error ${result.errors[0]?.extensions?.code}`) : (counts.deliveries += 1)),
      error: (error) => noteError(`subscription ended: ${error instanceof Error ? error.message : JSON.stringify(error).slice(0, 120)}`),
      complete: () => undefined,
    },
  );
  return () => {
    unsubscribe();
    void client.dispose();
  };
}

async function query(): Promise<void> {
  const operation = QUERIES[counts.queries % QUERIES.length]!;
  counts.queries += 1;
  try {
    const response = await fetch(graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(operation) });
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
    if (response.status >= 500) noteError(`query HTTP ${response.status}`);
    for (const error of body.errors ?? []) if (error.extensions?.code !== 'TEAPOT') noteError(`query error ${error.extensions?.code}`);
  } catch (error) {
    noteError(`query failed: ${(error as Error).message}`);
  }
}

async function giveBonus(): Promise<void> {
  counts.events += 1;
  try {
    const response = await fetch(`${recognition.origin}/__emulator/bonuses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: counts.events % 2 ? 'soak' : 'other', amount: 1 }),
    });
    await response.text();
    if (!response.ok) noteError(`webhook trigger HTTP ${response.status}`);
  } catch (error) {
    noteError(`webhook trigger failed: ${(error as Error).message}`);
  }
}

const attackNames = Object.keys(ATTACKS);
async function attack(): Promise<void> {
  const name = attackNames[counts.attacks % attackNames.length]!;
  counts.attacks += 1;
  try {
    const result = await ATTACKS[name]!(attacker);
    if (!result.expected) noteError(`attack ${name} not refused as documented: ${result.detail}`);
  } catch (error) {
    noteError(`attack ${name} threw: ${(error as Error).message}`);
  }
}

async function healthMs(): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${gatewayOrigin}/health`);
  await response.text();
  if (!response.ok) noteError(`/health HTTP ${response.status}`);
  return performance.now() - started;
}

const steady = Array.from({ length: subscriberCount }, (_, index) => subscribe(index % 2 ? 'soak' : 'other'));
/** Work under way, awaited before the stack stops: a request cut off by the stop is not the graph's error. */
const inFlight = new Set<Promise<void>>();
const track = (work: () => Promise<void>) => () => {
  const running = work().finally(() => inFlight.delete(running));
  inFlight.add(running);
};
const timers = [
  setInterval(track(query), 1000 / queriesPerSecond),
  setInterval(track(giveBonus), eventEveryMs),
  setInterval(track(attack), attackEveryMs),
  // Churn: one subscription comes and goes every few seconds, through its own connection.
  setInterval(() => {
    const close = subscribe('churn');
    counts.churned += 1;
    setTimeout(close, 2000);
  }, 5000),
];

const sample = () => Object.fromEntries(stack.children.map((child) => [child.name, rssBytes(child.pid)]));
/**
 * RSS every 5 s as well: with the young generation allowed 64 MiB semi-spaces (as `npm start`
 * runs), one reading can differ from the next by tens of MiB with no change in live data; the
 * median of the first and of the last minute says more about a leak than two single readings.
 */
const samples: { at: number; rss: Record<string, number | undefined> }[] = [];
const sampler = setInterval(() => samples.push({ at: Date.now(), rss: sample() }), 5000);
await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
const startedAt = Date.now();
const atStart = sample();
const healthAtStart = await healthMs();
let slowestHealthMs = healthAtStart;
const healthTimer = setInterval(() => void healthMs().then((ms) => (slowestHealthMs = Math.max(slowestHealthMs, ms))), 10_000);
await new Promise((resolve) => setTimeout(resolve, Math.max(0, stopAt - Date.now())));
for (const timer of [...timers, healthTimer, sampler]) clearInterval(timer);
await Promise.all(inFlight);
const atEnd = sample();
const healthAtEnd = await healthMs();
for (const close of steady) close();
for (const client of clients) void client.dispose();
await stack.stop();

const mib = (bytes: number | undefined) => (bytes === undefined ? 'gone' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);
const lines = [`soak: ${(durationMs / 1000).toFixed(0)} s (memory read after ${(WARMUP_MS / 1000).toFixed(0)} s of warm-up and at the end)`];
lines.push(
  `traffic: ${counts.queries} queries, ${counts.events} webhook events, ${counts.deliveries} subscription deliveries to ${subscriberCount} steady subscribers, ${counts.churned} churned subscriptions, ${counts.attacks} attacks`,
);
const windowMs = Math.min(60_000, (Date.now() - startedAt) / 3);
const median = (name: string, from: number, to: number) => {
  const values = samples.filter((entry) => entry.at >= from && entry.at <= to).map((entry) => entry.rss[name]).filter((value): value is number => value !== undefined).sort((a, b) => a - b);
  return values.length ? values[Math.floor(values.length / 2)] : undefined;
};
const percent = (from: number | undefined, to: number | undefined) => (from && to ? (to - from) / from : Number.NaN);
const shown = (change: number) => (Number.isFinite(change) ? `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}%` : 'n/a');
let flat = true;
lines.push(`  ${'process'.padEnd(22)} ${'RSS at start -> at end'.padEnd(36)} median of the first -> last ${(windowMs / 1000).toFixed(0)} s`);
for (const name of Object.keys(atStart)) {
  const start = atStart[name];
  const end = atEnd[name];
  const first = median(name, startedAt, startedAt + windowMs);
  const last = median(name, Date.now() - windowMs, Date.now());
  const within = percent(first, last) <= FLAT_WITHIN;
  flat &&= within;
  lines.push(
    `  ${name.padEnd(22)} ${`${mib(start)} -> ${mib(end)} (${shown(percent(start, end))})`.padEnd(36)} ${mib(first)} -> ${mib(last)} (${shown(percent(first, last))})${within ? '' : '  NOT FLAT'}`,
  );
}
lines.push(`/health: ${healthAtStart.toFixed(1)} ms at the start, ${healthAtEnd.toFixed(1)} ms at the end, slowest ${slowestHealthMs.toFixed(1)} ms`);
lines.push(errors.size ? 'errors:' : 'errors: none');
for (const [kind, count] of [...errors].sort((a, b) => b[1] - a[1])) lines.push(`  ${count} x ${kind}`);
lines.push(flat && errors.size === 0 ? 'PASS: memory flat within 10% (medians), no unexpected error' : 'FAIL');
console.log(lines.join('\n'));
process.exit(flat && errors.size === 0 ? 0 : 1);
