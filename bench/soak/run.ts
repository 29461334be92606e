import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient as createWsClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { GATEWAY_RUNTIME_FLAGS, RUNTIME_FLAGS } from '../processes.ts';
import { launchStack } from '../stack.ts';
import { ATTACKS, type AttackTarget } from './attacks.ts';
import type { HeapReading } from './heapProbe.ts';

/**
 * `npm run soak`: the whole graph as separate processes (production settings, as `npm run bench`)
 * under a steady mix of queries, subscriptions, webhook events and, at a low rate, the attacks of
 * the hardening work; then each process's memory at the start and the end of the measured time
 * (resident set, and heap used after a full collection), and every error seen. Not part of CI.
 * Settings from the environment:
 * - `SOAK_WARMUP_MS`: the mix runs this long before the first reading. @default 120000
 * - `SOAK_DURATION_MS`: how long the mix runs after it, between the two readings. @default 600000 (ten minutes)
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
const warmupMs = number(process.env, 'SOAK_WARMUP_MS', 120_000);
const durationMs = number(process.env, 'SOAK_DURATION_MS', 600_000);
const queriesPerSecond = number(process.env, 'SOAK_QUERIES_PER_SECOND', 20);
const attackEveryMs = number(process.env, 'SOAK_ATTACK_EVERY_MS', 3000);
const eventEveryMs = number(process.env, 'SOAK_EVENT_EVERY_MS', 1000);
const subscriberCount = number(process.env, 'SOAK_SUBSCRIBERS', 20);
/** Growth allowed between the two readings, of the RSS medians and of the heap after a collection. */
const FLAT_WITHIN = 0.1;
/** Heap readings in between, for the report's timeline. */
const HEAP_EVERY_MS = 60_000;

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

/**
 * Memory that grows by design up to a bound must reach it before the first reading, or its
 * filling reads as a leak. The recognition subgraph's event log keeps 10,000 events by default
 * (about 5 KiB each: hours at one event a second), so the soak holds it to 100, full after the
 * first 100 s; its other bound, 10 event ids remembered per event kept against redelivery,
 * then fills too (1,000 ids, about 0.1 MiB). The emulators' request logs (a test instrument:
 * the last 20,000 requests, about 6 MiB, some nine minutes of this mix) are emptied before each
 * reading instead.
 */
process.env.RECOGNITION_EVENT_LOG_SIZE ??= '100';
// Each process answers SIGUSR2 with its heap after a full collection (bench/soak/heapProbe.ts).
const heapDir = mkdtempSync(join(tmpdir(), 'soak-heap-'));
process.env.SOAK_HEAP_PROBE_DIR = heapDir;
const heapProbe = new URL('./heapProbe.ts', import.meta.url).href;
/**
 * Each process's young generation starts at the size its production flags let it grow to (two
 * semi-spaces of 64 MiB, of 32 MiB in the gateway). V8 grows it from 1 MiB toward that bound when it
 * chooses, under allocation: in a ten-minute run at 64 MiB the gateway's went from 8 to 128 MiB
 * committed, its RSS +50% with its live data +0.1%. Growth that is bounded and V8's to time is not
 * what the soak looks for, so it is taken out of the reading; what is left of RSS is everything else.
 */
const youngAtItsBound = (flags: readonly string[]) => {
  const maxSemiSpace = flags.find((flag) => flag.startsWith('--max-semi-space-size='))?.split('=')[1];
  return maxSemiSpace ? [`--min-semi-space-size=${maxSemiSpace}`] : [];
};
const stack = await launchStack({ nodeFlags: (name) => [...youngAtItsBound(name === 'gateway' ? GATEWAY_RUNTIME_FLAGS : RUNTIME_FLAGS), '--expose-gc', '--import', 'tsx', '--import', heapProbe] });
const graphqlUrl = stack.graphqlUrl;
const gatewayOrigin = new URL(graphqlUrl).origin;
const recognition = stack.emulators.find((emulator) => emulator.service === 'recognition')!;
const headers = stack.demoHeaders;
// The attacks run as another caller, so the caps they meet never touch the steady subscribers.
const attacker: AttackTarget = { graphqlUrl, headers: { ...headers, 'x-recognition-token': DEMO_TOKENS.member } };
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

/** The last line each process appended, by pid: how many were read. */
const heapLinesSeen = new Map<number, number>();
/**
 * Each process's heap figures after a full collection (undefined if it did not answer within
 * 10 s). Live data is the heap used, unlike RSS: with 64 MiB semi-spaces (`npm start`'s flags)
 * the young generation alone moves RSS by tens of MiB, and V8 gives pages back when it chooses.
 */
async function heapsAfterCollection(): Promise<Record<string, HeapReading | undefined>> {
  await Promise.all(stack.emulators.map((emulator) => emulator.clearRequests()));
  for (const child of stack.children) {
    try {
      process.kill(child.pid, 'SIGUSR2');
    } catch {
      noteError(`${child.name} is gone`);
    }
  }
  const read = (pid: number): HeapReading | undefined => {
    let lines: string[];
    try {
      lines = readFileSync(join(heapDir, `${pid}.jsonl`), 'utf8').trim().split('\n');
    } catch {
      return undefined;
    }
    if (lines.length <= (heapLinesSeen.get(pid) ?? 0)) return undefined;
    heapLinesSeen.set(pid, lines.length);
    return JSON.parse(lines[lines.length - 1]!) as HeapReading;
  };
  const heaps: Record<string, HeapReading | undefined> = {};
  const giveUpAt = Date.now() + 10_000;
  while (stack.children.some((child) => heaps[child.name] === undefined) && Date.now() < giveUpAt) {
    for (const child of stack.children) heaps[child.name] ??= read(child.pid);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return heaps;
}

/**
 * RSS every 5 s as well: one reading can differ from the next by tens of MiB with no change in
 * live data; the median of the first and of the last minute says more than two single readings.
 */
const samples: { at: number; rss: Record<string, number | undefined> }[] = [];
const sampler = setInterval(() => samples.push({ at: Date.now(), rss: sample() }), 5000);
await new Promise((resolve) => setTimeout(resolve, warmupMs));
const startedAt = Date.now();
const atStart = sample();
const heapTimeline = [await heapsAfterCollection()];
const healthAtStart = await healthMs();
let slowestHealthMs = healthAtStart;
const healthTimer = setInterval(() => void healthMs().then((ms) => (slowestHealthMs = Math.max(slowestHealthMs, ms))), 10_000);
const heapTimer = setInterval(() => void heapsAfterCollection().then((heaps) => heapTimeline.push(heaps)), HEAP_EVERY_MS);
await new Promise((resolve) => setTimeout(resolve, durationMs));
for (const timer of [...timers, healthTimer, sampler, heapTimer]) clearInterval(timer);
await Promise.all(inFlight);
const atEnd = sample();
const heapAtEnd = await heapsAfterCollection();
heapTimeline.push(heapAtEnd);
const healthAtEnd = await healthMs();
for (const close of steady) close();
for (const client of clients) void client.dispose();
await stack.stop();
rmSync(heapDir, { recursive: true, force: true });

const mib = (bytes: number | undefined) => (bytes === undefined ? 'gone' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);
const percent = (from: number | undefined, to: number | undefined) => (from && to ? (to - from) / from : Number.NaN);
const shown = (change: number) => (Number.isFinite(change) ? `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}%` : 'n/a');
// Shrinking is not a leak: only growth past the allowance fails.
const grewPast = (change: number) => !(change <= FLAT_WITHIN);
const windowMs = Math.min(60_000, durationMs / 3);
const median = (name: string, from: number, to: number) => {
  const values = samples.filter((entry) => entry.at >= from && entry.at <= to).map((entry) => entry.rss[name]).filter((value): value is number => value !== undefined).sort((a, b) => a - b);
  return values.length ? values[Math.floor(values.length / 2)] : undefined;
};

const lines = [`soak: ${(durationMs / 1000).toFixed(0)} s measured, after ${(warmupMs / 1000).toFixed(0)} s of warm-up under the same mix`];
lines.push(
  `traffic: ${counts.queries} queries, ${counts.events} webhook events, ${counts.deliveries} subscription deliveries to ${subscriberCount} steady subscribers, ${counts.churned} churned subscriptions, ${counts.attacks} attacks`,
);
const heapAtStart = heapTimeline[0]!;
const endedAt = startedAt + durationMs;
/** Live data after a full collection: the JavaScript heap in use and what its objects hold outside it. */
const live = (reading: HeapReading | undefined) => (reading ? reading.heapUsed + reading.external : undefined);
const notFlat = (change: number) => (grewPast(change) ? ' NOT FLAT' : '');
const rssNotFlat: string[] = [];
const leaking: string[] = [];
const column = (text: string) => text.padEnd(38);
lines.push(`  ${'process'.padEnd(22)} ${column('RSS at start -> at end')} ${column(`RSS median, first -> last ${(windowMs / 1000).toFixed(0)} s`)} ${column('live after a full collection')} JS heap committed (of it young generation)`);
for (const { name } of stack.children) {
  const first = median(name, startedAt, startedAt + windowMs);
  const last = median(name, endedAt - windowMs, endedAt);
  const rssChange = percent(first, last);
  const [from, to] = [heapAtStart[name], heapAtEnd[name]];
  const liveChange = percent(live(from), live(to));
  if (grewPast(rssChange)) rssNotFlat.push(name);
  if (grewPast(liveChange)) leaking.push(name);
  lines.push(
    `  ${name.padEnd(22)} ${column(`${mib(atStart[name])} -> ${mib(atEnd[name])} (${shown(percent(atStart[name], atEnd[name]))})`)} ${column(`${mib(first)} -> ${mib(last)} (${shown(rssChange)})${notFlat(rssChange)}`)} ${column(`${mib(live(from))} -> ${mib(live(to))} (${shown(liveChange)})${notFlat(liveChange)}`)} ${mib(from?.heapCommitted)} (${mib(from?.youngCommitted)}) -> ${mib(to?.heapCommitted)} (${mib(to?.youngCommitted)})`,
  );
}
lines.push(`live after a full collection every ${HEAP_EVERY_MS / 1000} s (MiB):`);
for (const { name } of stack.children) lines.push(`  ${name.padEnd(22)} ${heapTimeline.map((heaps) => (heaps[name] === undefined ? '?' : (live(heaps[name])! / 1024 / 1024).toFixed(1))).join(' ')}`);
lines.push(`/health: ${healthAtStart.toFixed(1)} ms at the start, ${healthAtEnd.toFixed(1)} ms at the end, slowest ${slowestHealthMs.toFixed(1)} ms`);
lines.push(errors.size ? 'errors:' : 'errors: none');
for (const [kind, count] of [...errors].sort((a, b) => b[1] - a[1])) lines.push(`  ${count} x ${kind}`);
lines.push(rssNotFlat.length ? `RSS (medians) NOT flat within ${FLAT_WITHIN * 100}%: ${rssNotFlat.join(', ')}` : `RSS (medians) flat within ${FLAT_WITHIN * 100}% for every process`);
for (const name of rssNotFlat) {
  const [from, to] = [heapAtStart[name], heapAtEnd[name]];
  const grew = (pick: (reading: HeapReading) => number) => mib(from && to ? pick(to) - pick(from) : undefined);
  lines.push(`  ${name}: JS heap committed ${grew((reading) => reading.heapCommitted)} (young generation ${grew((reading) => reading.youngCommitted)}), live data ${grew((reading) => live(reading)!)}`);
}
const passed = leaking.length === 0 && errors.size === 0;
lines.push(
  passed
    ? `PASS: live data after a full collection flat within ${FLAT_WITHIN * 100}% in every process, no unexpected error`
    : `FAIL:${leaking.length ? ` live data grew past ${FLAT_WITHIN * 100}% in ${leaking.join(', ')} (look for a leak);` : ''}${errors.size ? ' unexpected errors' : ''}`,
);
console.log(lines.join('\n'));
process.exit(passed ? 0 : 1);
