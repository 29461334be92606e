import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { createGraphClient, createUpstreamClient } from './clients.ts';
import { runLoad } from './load.ts';
import { measureEconomy, measureScenario, sidesOf, verify } from './measure.ts';
import { REFERENCE_OPERATIONS } from './operations.ts';
import { GATEWAY_RUNTIME_FLAGS, ONE_PROCESS_RUNTIME_FLAGS, REPO_ROOT, RUNTIME_FLAGS, type Child } from './processes.ts';
import { formatReport, judgeTargets, writeReport, type BenchReport, type EconomyResult, type ScenarioResult } from './report.ts';
import { launchStack } from './stack.ts';
import { launchTwoHops, measureTwoHops, TWO_HOPS_RUNS, type TwoHopsResult, type TwoHopsStack } from './twoHops.ts';
import { launchEnforcement, measureEnforcement, type EnforcementResult, type EnforcementStack } from './enforcement.ts';
import { measureSubscriptions, type SubscriptionSettings } from './subscriptions.ts';
import { measureIdenticalReads, type IdenticalReadsResult } from './identicalReads.ts';

/**
 * `npm run bench`. Settings from the environment:
 * - `BENCH_QUICK=1`: a few hundred milliseconds per scenario, to prove the harness works (figures meaningless).
 * - `BENCH_OPS=reward,leaderboard100`: only these reference operations.
 * - `BENCH_SUBSCRIBERS=1000,10000`: only these counts of identical subscribers. @default 1,100,1000,10000
 * - `BENCH_OUT=path`: where the JSON goes. @default bench/results/latest.json
 * - `BENCH_CPU_PROF=dir`: the gateway, subgraphs and emulators write CPU profiles to `dir/<name>/`
 *   (the largest file is the process's main thread; summarise it with bench/profile.ts).
 */
const quick = process.env.BENCH_QUICK === '1';
// Sized so the whole run stays under 10 minutes on 2 cores: 24 scenarios of about 9 s, 12 stretches
// of identical dashboards of about 2.5 s, the hand-written two hops in about 12 s at 0 ms and
// concurrency 1, 100 s at concurrency 32 and 22 s at 20 ms, then about 60 s of subscriptions.
const settings = quick
  ? { roundMs: 100, rounds: 2, warmupMs: 50, jitWarmupMs: 50, economyRuns: 2 }
  : { roundMs: 1000, rounds: 4, warmupMs: 400, jitWarmupMs: 500, economyRuns: 5 };
const twoHopsSettings = { ...settings, rounds: 3, loadWarmupMs: quick ? 50 : 2000 };
const subscriptionSettings: SubscriptionSettings = quick
  ? { subscriberCounts: [1, 10], multipartSubscriberCounts: [10], bareWsSubscriberCounts: [10], events: 3, sustainedMs: 300, window: 4 }
  : { subscriberCounts: [1, 100, 1000, 10_000], multipartSubscriberCounts: [1000], bareWsSubscriberCounts: [1000], events: 30, sustainedMs: 3000, window: 8 };
const subscriberCounts = process.env.BENCH_SUBSCRIBERS?.split(',').map((count) => Number(count.trim()));
if (subscriberCounts?.some((count) => !Number.isInteger(count) || count < 1 || count > 20_000)) {
  console.error('BENCH_SUBSCRIBERS lists counts of subscribers from 1 to 20000, such as 1000,10000');
  process.exit(2);
}
if (subscriberCounts) {
  subscriptionSettings.subscriberCounts = subscriberCounts;
  // The bare broadcast is timed at the target's count only, when that count is asked for.
  subscriptionSettings.bareWsSubscriberCounts = subscriberCounts.filter((count) => count === 1000);
}
const identicalSettings = quick ? { warmupMs: 50, durationMs: 200 } : { warmupMs: 400, durationMs: 2000 };
/** The identical dashboards: this many clients asking one operation at once. */
const IDENTICAL_CONCURRENCY = 32;
// The gateways it compares start cold: the first operation's warm-up is the longer one.
const enforcementSettings = quick ? { ...settings, concurrency: 32, rounds: 2 } : { ...settings, concurrency: 32, rounds: 3, warmupMs: 1000 };
const CONCURRENCIES = [1, 32];
const EMULATOR_LATENCIES_MS = [0, 20];
const outPath = resolve(REPO_ROOT, process.env.BENCH_OUT ?? 'bench/results/latest.json');
const profileDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
const only = process.env.BENCH_OPS?.split(',').map((name) => name.trim());

const operations = only ? REFERENCE_OPERATIONS.filter((operation) => only.includes(operation.name)) : REFERENCE_OPERATIONS;
if (operations.length === 0) {
  console.error(`BENCH_OPS names no reference operation; known: ${REFERENCE_OPERATIONS.map((operation) => operation.name).join(', ')}`);
  process.exit(2);
}

const startedAt = new Date();
const loadAtStart = loadavg()[0]!;
const progress = (message: string) => console.error(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(3)}s] ${message}`);

const stack = await launchStack({
  // One folder per process: its main thread and the module loader's thread each write a profile.
  nodeFlags: (name) => (profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${name}`] : []),
});
progress(`started ${stack.children.map((child) => `${child.name} (pid ${child.pid})`).join(', ')}`);
const graph = createGraphClient(stack.graphqlUrl, stack.demoHeaders, Math.max(...CONCURRENCIES));
const upstream = createUpstreamClient(Object.fromEntries(stack.emulators.map((emulator) => [emulator.service, emulator.origin])));
const setLatency = (ms: number) => Promise.all(stack.emulators.map((emulator) => emulator.setLatency(ms)));
let hops: TwoHopsStack | undefined;
let unshared: Child | undefined;
let unbatched: Child | undefined;
let oneProcess: Child | undefined;
let enforcement: EnforcementStack | undefined;

try {
  const economy: EconomyResult[] = [];
  for (const operation of operations) {
    const sides = sidesOf(operation, graph, upstream);
    await verify(operation, sides);
    economy.push(await measureEconomy(operation, sides, stack.emulators, settings.economyRuns));
  }
  progress('upstream calls counted');

  // Every process compiles its hot paths on first use: without this, whichever operation is
  // measured first pays for the whole graph's JIT warm-up.
  for (const operation of operations) {
    const sides = sidesOf(operation, graph, upstream);
    await runLoad(sides.floor, { concurrency: 4, durationMs: settings.jitWarmupMs });
    await runLoad(sides.gateway, { concurrency: 4, durationMs: settings.jitWarmupMs });
  }
  progress('warmed up');

  const recognition = stack.emulators.find((emulator) => emulator.service === 'recognition')!;
  const scenarios: ScenarioResult[] = [];
  const twoHops: TwoHopsResult[] = [];
  const identicalReads: IdenticalReadsResult[] = [];
  const runsAt = (latency: number) =>
    TWO_HOPS_RUNS.filter((run) => run.emulatorLatencyMs === latency).flatMap((run) => operations.filter((operation) => run.operations.includes(operation.name)).map((operation) => ({ operation, concurrency: run.concurrency })));
  const marketplace = stack.emulators.find((emulator) => emulator.service === 'marketplace')!;
  // Started once, each operation warmed at its first use, timed at every latency and concurrency that lists it.
  const hopsNeeded = EMULATOR_LATENCIES_MS.some((latency) => runsAt(latency).length > 0);
  // At concurrency 32 the graph shares identical reads in flight and the hops do not: a gateway
  // that shares none is timed beside them too, for the graph's own cost, and one that sends every
  // read alone as well: what batching one credential's reads is worth. The one-process deployment
  // is timed beside the hops at every concurrency, sharing no read as they do. All started side by
  // side (each spends seconds loading its modules), and every one stopped if any fails to start.
  const manyAtOnce = EMULATOR_LATENCIES_MS.flatMap(runsAt).filter((run) => run.concurrency > 1);
  const launched = await Promise.allSettled([
    hopsNeeded ? launchTwoHops(recognition.origin, marketplace.origin) : undefined,
    hopsNeeded && manyAtOnce.length ? stack.launchGateway('gateway-unshared', { GATEWAY_DEDUPE_READS: 'off' }) : undefined,
    hopsNeeded && manyAtOnce.length ? stack.launchGateway('gateway-unbatched', { GATEWAY_DEDUPE_READS: 'off', GATEWAY_BATCH_READS: 'off' }) : undefined,
    hopsNeeded ? stack.launchOneProcess('one-process', { GATEWAY_DEDUPE_READS: 'off' }) : undefined,
  ] as const);
  const started = <T>(result: PromiseSettledResult<T>) => (result.status === 'fulfilled' ? result.value : undefined);
  // Kept before any failure is thrown, so that `finally` stops what did start.
  [hops, unshared, unbatched, oneProcess] = [started(launched[0]), started(launched[1]), started(launched[2]), started(launched[3])];
  const failedLaunch = launched.find((result) => result.status === 'rejected');
  if (failedLaunch) throw failedLaunch.reason;
  for (const side of [unshared, unbatched]) {
    if (!side) continue;
    const client = createGraphClient(side.url, stack.demoHeaders, IDENTICAL_CONCURRENCY);
    for (const { operation } of manyAtOnce) {
      const body = JSON.stringify({ query: operation.query, variables: operation.variables });
      await runLoad(() => client.execute(body), { concurrency: IDENTICAL_CONCURRENCY, durationMs: twoHopsSettings.loadWarmupMs });
    }
    await client.close();
  }
  const pidsNamed = (suffix: string) => stack.children.filter((child) => child.name.endsWith(suffix)).map((child) => child.pid);
  const graphProcesses = { gateway: stack.children.find((child) => child.name === 'gateway')!.pid, subgraphs: pidsNamed('-subgraph'), emulators: pidsNamed('-emulator'), oneProcess: oneProcess?.pid };
  const warmed = new Set<string>();
  for (const latency of EMULATOR_LATENCIES_MS) {
    await setLatency(latency);
    for (const operation of operations) {
      const sides = sidesOf(operation, graph, upstream);
      for (const concurrency of CONCURRENCIES) {
        // The request log is the emulator's control surface, not its service: keep it short.
        await Promise.all(stack.emulators.map((emulator) => emulator.clearRequests()));
        const result = await measureScenario(operation, sides, { ...settings, concurrency, emulatorLatencyMs: latency });
        scenarios.push(result);
        progress(`${operation.name}, emulator ${latency} ms, concurrency ${concurrency}: p50 +${result.p50OverheadMs.toFixed(2)} ms, ops/s ratio ${result.throughputRatio.toFixed(2)}`);
      }
    }
    for (const operation of operations) {
      await Promise.all(stack.emulators.map((emulator) => emulator.clearRequests()));
      const result = await measureIdenticalReads(operation, sidesOf(operation, graph, upstream).gateway, stack.emulators, { ...identicalSettings, concurrency: IDENTICAL_CONCURRENCY, emulatorLatencyMs: latency });
      identicalReads.push(result);
      progress(`${IDENTICAL_CONCURRENCY} identical ${operation.name}, emulator ${latency} ms: ${result.gateway.opsPerSec.toFixed(0)} ops/s, ${result.upstreamCallsPerRequest.toFixed(2)} upstream calls per request`);
    }
    for (const { operation: reference, concurrency } of hops ? runsAt(latency) : []) {
      // 3 rounds, each side first once (5 at concurrency 32, with five sides), keep the run under 10 minutes.
      const unsharedHere = concurrency > 1 ? unshared : undefined;
      const unbatchedHere = concurrency > 1 ? unbatched : undefined;
      const result = await measureTwoHops(
        reference,
        sidesOf(reference, graph, upstream),
        hops!,
        stack.demoHeaders,
        { ...twoHopsSettings, concurrency, loadWarmupMs: warmed.has(reference.name) ? 0 : twoHopsSettings.loadWarmupMs, emulatorLatencyMs: latency },
        { ...graphProcesses, gatewayUnshared: unsharedHere?.pid, gatewayUnbatched: unbatchedHere?.pid },
        { unsharedUrl: unsharedHere?.url, unbatchedUrl: unbatchedHere?.url, oneProcessUrl: oneProcess?.url },
      );
      warmed.add(reference.name);
      twoHops.push(result);
      progress(
        `two hand-written hops on ${reference.name}, emulator ${latency} ms, concurrency ${concurrency}: p50 +${result.twoHopsOverheadMs.toFixed(2)} ms over the floor, the graph +${result.gatewayOverheadMs.toFixed(2)} ms${result.oneProcessOverheadMs === undefined ? '' : ` (in one process +${result.oneProcessOverheadMs.toFixed(2)} ms, ${result.oneProcessThroughputRatio!.toFixed(2)}x the hops' throughput)`}, the graph's throughput ${result.throughputRatio.toFixed(2)}x the hops'${result.unsharedThroughputRatio === undefined ? '' : ` (${result.unsharedThroughputRatio.toFixed(2)}x sharing no read`}${result.unbatchedThroughputRatio === undefined ? '' : `, ${result.unbatchedThroughputRatio.toFixed(2)}x batching none either`}${result.unsharedThroughputRatio === undefined ? '' : ')'}`,
      );
    }
  }
  // The reference has no part in the subscriptions; the `finally` below only stops it after a failure.
  const oneProcessPeakRss = oneProcess?.peakRssBytes();
  await Promise.all([hops?.stop(), unshared?.stop(), unbatched?.stop(), oneProcess?.stop()]);
  hops = undefined;
  unshared = undefined;
  unbatched = undefined;
  oneProcess = undefined;
  await setLatency(0);

  // What production's settings cost: trusted documents, rate limits and traces, off against on.
  enforcement = await launchEnforcement(stack.launchGateway, operations);
  const enforcements: EnforcementResult[] = [];
  for (const operation of operations) {
    const result = await measureEnforcement(operation, enforcement, stack.demoHeaders, { ...enforcementSettings, warmupMs: enforcements.length ? enforcementSettings.warmupMs : 4 * enforcementSettings.warmupMs });
    enforcements.push(result);
    progress(`${operation.name} at concurrency 32 with trusted documents, rate limits and traces: ${result.throughputRatio.toFixed(2)}x the throughput without, p50 ${result.p50OverheadMs >= 0 ? '+' : ''}${result.p50OverheadMs.toFixed(2)} ms`);
  }
  const spanExports = enforcement.exportsReceived();
  await enforcement.stop();
  enforcement = undefined;
  if (spanExports === 0) throw new Error('the enforcing gateway exported no spans: tracing was not on, so its figures are not what they claim');

  const gatewayProcess = stack.children.find((child) => child.name === 'gateway')!;
  const subscriptions = await measureSubscriptions({ graphqlUrl: stack.graphqlUrl, pid: gatewayProcess.pid, inspectorUrl: gatewayProcess.inspectorUrl() }, recognition.origin, stack.demoHeaders, subscriptionSettings, (row) =>
    progress(`${row.subscribers} subscribers over ${row.transport}: p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms, ${row.deliveriesPerSec.toFixed(0)} deliveries/s, ${row.gatewayHeapKiBPerSubscriber.toFixed(1)} KiB of live gateway heap (${row.gatewayRssKiBPerSubscriber.toFixed(1)} KiB of RSS) per idle subscriber`),
  );

  const mib = (bytes: number | undefined) => (bytes === undefined ? null : bytes / 2 ** 20);
  const peakRssMiB = Object.fromEntries([...stack.children.map((child) => [child.name, mib(child.peakRssBytes())]), ...(oneProcessPeakRss === undefined ? [] : [['one-process', mib(oneProcessPeakRss)]])]);
  const report: BenchReport = {
    meta: {
      startedAt: startedAt.toISOString(),
      durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      node: process.version,
      cpus: availableParallelism(),
      loadAverage: { start: loadAtStart, end: loadavg()[0]! },
      quick,
      settings: {
        roundMs: settings.roundMs,
        rounds: settings.rounds,
        warmupMs: settings.warmupMs,
        concurrencies: CONCURRENCIES,
        emulatorLatenciesMs: EMULATOR_LATENCIES_MS,
        subscriptions: subscriptionSettings,
      },
      runtimeFlags: RUNTIME_FLAGS,
      gatewayRuntimeFlags: GATEWAY_RUNTIME_FLAGS,
      oneProcessRuntimeFlags: ONE_PROCESS_RUNTIME_FLAGS,
    },
    economy,
    scenarios,
    peakRssMiB,
    targets: judgeTargets(economy, scenarios, { identicalReads, twoHops, subscriptions }),
    identicalReads,
    twoHops,
    enforcement: enforcements,
    subscriptions,
  };
  writeReport(outPath, report);
  console.log(formatReport(report));
  progress(`report written to ${outPath}`);
} finally {
  await Promise.all([graph.close(), upstream.close(), hops?.stop(), unshared?.stop(), unbatched?.stop(), oneProcess?.stop(), enforcement?.stop()]);
  await stack.stop();
}
