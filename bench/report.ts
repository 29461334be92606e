import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Summary } from './stats.ts';
import type { SubscriptionResult, SubscriptionSettings } from './subscriptions.ts';
import type { HopsCpu, TwoHopsResult } from './twoHops.ts';
import type { IdenticalReadsResult } from './identicalReads.ts';
import type { EnforcementResult } from './enforcement.ts';

/** One operation at one emulator latency and one concurrency, both sides. */
export interface ScenarioResult {
  operation: string;
  emulatorLatencyMs: number;
  concurrency: number;
  floor: Summary;
  gateway: Summary;
  /** Gateway throughput over the floor's: 1 would be a free gateway. */
  throughputRatio: number;
  /** Gateway p50 over the floor's. */
  p50Ratio: number;
  /** Gateway p50 minus the floor's: what the graph adds to a typical call. */
  p50OverheadMs: number;
  p99OverheadMs: number;
}

export interface EconomyResult {
  operation: string;
  description: string;
  /** One call per distinct resource: the least the REST API allows. */
  minUpstreamCalls: number;
  gatewayCallsPerOp: number;
  floorCallsPerOp: number;
}

export interface TargetResult {
  target: string;
  met: boolean;
  detail: string;
}

export interface BenchReport {
  meta: {
    startedAt: string;
    durationSeconds: number;
    node: string;
    cpus: number;
    /** 1-minute load average before and after: a busy machine shows here. */
    loadAverage: { start: number; end: number };
    quick: boolean;
    settings: { roundMs: number; rounds: number; warmupMs: number; concurrencies: number[]; emulatorLatenciesMs: number[]; subscriptions: SubscriptionSettings };
    runtimeFlags: readonly string[];
    /** The gateway's and the reference proxy's. */
    gatewayRuntimeFlags?: readonly string[];
    /** The one-process deployment's. */
    oneProcessRuntimeFlags?: readonly string[];
  };
  economy: EconomyResult[];
  scenarios: ScenarioResult[];
  /** Peak resident set (VmHWM) of each process over the whole run, in MiB. */
  peakRssMiB: Record<string, number | null>;
  targets: TargetResult[];
  /** 32 clients asking one operation at once, per operation and emulator latency: throughput and upstream calls per request. */
  identicalReads: IdenticalReadsResult[];
  /** The graph against two hand-written hops, one entry per operation, emulator latency and concurrency timed; empty when the run left those operations out. */
  twoHops: TwoHopsResult[];
  /** Throughput and latency with trusted documents, rate limits and traces on against off, per operation at concurrency 32. */
  enforcement: EnforcementResult[];
  /** Webhook-to-client latency, deliveries per second and gateway memory per idle subscriber, by number of identical subscribers. */
  subscriptions: SubscriptionResult[];
}

export function scenarioResult(operation: string, emulatorLatencyMs: number, concurrency: number, floor: Summary, gateway: Summary): ScenarioResult {
  return {
    operation,
    emulatorLatencyMs,
    concurrency,
    floor,
    gateway,
    throughputRatio: gateway.opsPerSec / floor.opsPerSec,
    p50Ratio: gateway.p50Ms / floor.p50Ms,
    p50OverheadMs: gateway.p50Ms - floor.p50Ms,
    p99OverheadMs: gateway.p99Ms - floor.p99Ms,
  };
}

/** The measurements beyond the scenarios that targets are judged on. */
export interface TargetInputs {
  identicalReads?: readonly IdenticalReadsResult[];
  twoHops?: readonly TwoHopsResult[];
  subscriptions?: readonly SubscriptionResult[];
}

/** The issues' targets, judged on this run's figures. */
export function judgeTargets(economy: readonly EconomyResult[], scenarios: readonly ScenarioResult[], { identicalReads = [], twoHops = [], subscriptions: allSubscriptions = [] }: TargetInputs = {}): TargetResult[] {
  const targets: TargetResult[] = [];
  // Judged over graphql-ws, as every run before measured them; multipart rows are shown beside.
  const subscriptions = allSubscriptions.filter((row) => row.transport === 'graphql-ws' && row.server === 'gateway');
  const bareOf = (subscribers: number) => allSubscriptions.find((row) => row.server === 'bare ws' && row.subscribers === subscribers);
  for (const [latency, limit] of [
    [0, 2],
    [20, 3],
  ] as const) {
    for (const scenario of scenarios.filter((candidate) => candidate.concurrency === 1 && candidate.emulatorLatencyMs === latency)) {
      targets.push({
        target: `${scenario.operation}: gateway p50 at most ${limit} ms above the floor at concurrency 1, emulator ${latency} ms`,
        met: scenario.p50OverheadMs <= limit,
        detail: `+${fixed(scenario.p50OverheadMs, 2)} ms`,
      });
    }
  }
  for (const entry of economy) {
    targets.push({
      target: `${entry.operation}: upstream calls per operation equal to the minimum`,
      met: entry.gatewayCallsPerOp === entry.minUpstreamCalls,
      detail: `${entry.gatewayCallsPerOp} for a minimum of ${entry.minUpstreamCalls}`,
    });
  }
  for (const row of identicalReads.filter((candidate) => candidate.operation === 'redemptions20')) {
    targets.push({
      target: `redemptions20: ${row.concurrency} identical concurrent requests cost at most 2 upstream calls each, emulator ${row.emulatorLatencyMs} ms`,
      met: row.upstreamCallsPerRequest <= 2,
      detail: `${fixed(row.upstreamCallsPerRequest, 2)} per request`,
    });
  }
  for (const row of twoHops.filter((candidate) => candidate.concurrency === 32 && candidate.emulatorLatencyMs === 0)) {
    // Judged on the gateway that shares no read: the hops share none either.
    const ratio = row.unsharedThroughputRatio ?? row.throughputRatio;
    targets.push({
      target: `${row.operation}: the graph's throughput at least 0.8x the two hand-written hops' at concurrency 32, emulator 0 ms${row.unsharedThroughputRatio === undefined ? '' : ' (sharing no read)'}`,
      met: ratio >= 0.8,
      detail: `${fixed(ratio, 2)}x (${fixed(row.throughputRatio, 2)}x sharing identical reads)`,
    });
  }
  // The one-process deployment, judged on the same targets where it was timed beside the hops.
  for (const row of twoHops.filter((candidate) => candidate.oneProcess)) {
    if (row.concurrency === 1) {
      const limit = row.emulatorLatencyMs === 0 ? 2 : 3;
      targets.push({
        target: `${row.operation}: in one process, p50 at most ${limit} ms above the floor at concurrency 1, emulator ${row.emulatorLatencyMs} ms`,
        met: row.oneProcessOverheadMs! <= limit,
        detail: `+${fixed(row.oneProcessOverheadMs!, 2)} ms (the two processes +${fixed(row.gatewayOverheadMs, 2)} in the same rounds)`,
      });
    } else if (row.emulatorLatencyMs === 0) {
      targets.push({
        target: `${row.operation}: in one process, throughput at least 0.8x the two hand-written hops' at concurrency 32, emulator 0 ms (sharing no read)`,
        met: row.oneProcessThroughputRatio! >= 0.8,
        detail: `${fixed(row.oneProcessThroughputRatio!, 2)}x`,
      });
    }
  }
  const thousand = subscriptions.find((row) => row.subscribers === 1000);
  if (thousand) {
    const bare = bareOf(1000);
    targets.push({ target: 'subscriptions: p99 under 50 ms with 1,000 subscribers', met: thousand.p99Ms < 50, detail: `${fixed(thousand.p99Ms, 2)} ms${bare ? ` (a bare ws broadcast ${fixed(bare.p99Ms, 2)} ms)` : ''}` });
  }
  const largest = subscriptions.reduce<SubscriptionResult | undefined>((best, row) => (!best || row.subscribers > best.subscribers ? row : best), undefined);
  if (largest && largest.subscribers >= 1000) {
    const fastest = Math.max(...subscriptions.map((row) => row.deliveriesPerSec));
    targets.push({ target: 'subscriptions: at least 100,000 deliveries/s', met: fastest >= 100_000, detail: `${fixed(fastest, 0)} at best` });
    targets.push({
      target: `subscriptions: under 20 KiB of gateway memory per idle subscriber (${largest.subscribers} subscribers, each its own connection; RSS, live heap)`,
      met: largest.gatewayRssKiBPerSubscriber < 20,
      detail: `${fixed(largest.gatewayRssKiBPerSubscriber, 1)} KiB, ${fixed(largest.gatewayHeapKiBPerSubscriber, 1)} KiB`,
    });
  }
  return targets;
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** Which operation, emulator latency and concurrency a row is about. */
function whereOf(row: { operation: string; emulatorLatencyMs: number; concurrency: number }): string[] {
  return [row.operation, `${row.emulatorLatencyMs} ms`, String(row.concurrency)];
}

/** Throughput and latency of one side. */
function cellsOf(side: Summary): string[] {
  return [fixed(side.opsPerSec, 0), fixed(side.p50Ms, 2), fixed(side.p99Ms, 2)];
}

function formatTwoHops(rows: readonly TwoHopsResult[]): string[] {
  const atOne = rows.filter((row) => row.concurrency === 1);
  const atMany = rows.filter((row) => row.concurrency > 1);
  return [
    'What two hops cost on this machine: the sides in rotating rounds per operation, emulator latency and concurrency; one process = the gateway and every subgraph in one node process (stack/main.ts)',
    table(
      ['operation', 'emulator', 'conc', 'side', 'ops/s', 'p50 ms', 'p99 ms', 'p50 +ms over the floor', 'ops/s vs the hops'],
      rows.flatMap((row) => {
        const where = whereOf(row);
        return [
          [...where, 'floor', ...cellsOf(row.floor), '-', '-'],
          [...where, 'two hand-written hops', ...cellsOf(row.twoHops), fixed(row.twoHopsOverheadMs, 2), '1.00'],
          [...where, 'gateway + subgraph', ...cellsOf(row.gateway), fixed(row.gatewayOverheadMs, 2), fixed(row.throughputRatio, 2)],
          ...(row.gatewayUnshared ? [[...where, 'the same, sharing no read', ...cellsOf(row.gatewayUnshared), fixed(row.gatewayUnshared.p50Ms - row.floor.p50Ms, 2), fixed(row.unsharedThroughputRatio!, 2)]] : []),
          ...(row.gatewayUnbatched ? [[...where, 'the same, batching none either', ...cellsOf(row.gatewayUnbatched), fixed(row.gatewayUnbatched.p50Ms - row.floor.p50Ms, 2), fixed(row.unbatchedThroughputRatio!, 2)]] : []),
          ...(row.oneProcess ? [[...where, 'one process, sharing no read', ...cellsOf(row.oneProcess), fixed(row.oneProcessOverheadMs!, 2), fixed(row.oneProcessThroughputRatio!, 2)]] : []),
        ];
      }),
    ),
    ...(atOne.length ? [`The graph's own share at concurrency 1 (its p50 minus the hand-written hops'): ${atOne.map((row) => `${row.operation} ${fixed(row.graphOverTwoHopsMs, 2)} ms with the ${row.emulatorLatencyMs} ms emulator`).join(', ')}`] : []),
    ...(atOne.some((row) => row.oneProcess)
      ? [`In one process at concurrency 1 (its p50 minus the hand-written hops'): ${atOne.filter((row) => row.oneProcess).map((row) => `${row.operation} ${fixed(row.oneProcess!.p50Ms - row.twoHops.p50Ms, 2)} ms with the ${row.emulatorLatencyMs} ms emulator`).join(', ')}`]
      : []),
    ...(atMany.length
      ? [
          `The graph's throughput over the hops' at concurrency 32, sharing no read (sharing identical reads; batching no read either): ${atMany.map((row) => `${row.operation} ${fixed(row.unsharedThroughputRatio ?? Number.NaN, 2)}x (${fixed(row.throughputRatio, 2)}x; ${fixed(row.unbatchedThroughputRatio ?? Number.NaN, 2)}x)`).join(', ')}`,
        ]
      : []),
    ...(atMany.length
      ? [
          '',
          'Where the CPU goes at concurrency 32: µs per operation, user and system, from /proc over the timed rounds. First hop: the proxy or the gateway (in one process, with its subgraphs); second: the mapper or the subgraphs',
          table(
            ['operation', 'side', 'first hop', 'second hop', 'emulators', 'load client', 'all'],
            atMany.flatMap((row) => [
              [row.operation, 'two hand-written hops', ...cpuCells(row.cpuUsPerOp.twoHops)],
              [row.operation, 'gateway + subgraph', ...cpuCells(row.cpuUsPerOp.gateway)],
              ...(row.cpuUsPerOp.gatewayUnshared ? [[row.operation, 'the same, sharing no read', ...cpuCells(row.cpuUsPerOp.gatewayUnshared)]] : []),
              ...(row.cpuUsPerOp.gatewayUnbatched ? [[row.operation, 'the same, batching none either', ...cpuCells(row.cpuUsPerOp.gatewayUnbatched)]] : []),
              ...(row.cpuUsPerOp.oneProcess ? [[row.operation, 'one process, sharing no read', ...cpuCells(row.cpuUsPerOp.oneProcess)]] : []),
            ]),
          ),
        ]
      : []),
  ];
}

function cpuCells(cpu: HopsCpu): string[] {
  return [cpu.firstHop, cpu.secondHop, cpu.emulators, cpu.client, cpu.firstHop + cpu.secondHop + cpu.emulators + cpu.client].map((us) => fixed(us, 0));
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export function formatReport(report: BenchReport): string {
  const { meta } = report;
  const sections = [
    `Benchmark of ${meta.startedAt}: node ${meta.node}, ${meta.cpus} CPUs, load average ${fixed(meta.loadAverage.start, 2)} -> ${fixed(meta.loadAverage.end, 2)}, ${meta.durationSeconds} s${meta.quick ? ' (QUICK: figures are not meaningful)' : ''}`,
    `${meta.settings.rounds} alternating rounds of ${meta.settings.roundMs} ms per side after ${meta.settings.warmupMs} ms of warm-up; servers run with ${meta.runtimeFlags.join(' ') || 'no flags'}${meta.gatewayRuntimeFlags ? `, the gateway and the reference's proxy with ${meta.gatewayRuntimeFlags.join(' ')}` : ''}${meta.oneProcessRuntimeFlags ? `, the one process with ${meta.oneProcessRuntimeFlags.join(' ')}` : ''}`,
    '',
    'Latency and throughput: floor = straight to the emulator with undici; gateway = through gateway and subgraph',
    table(
      ['operation', 'emulator', 'conc', 'floor ops/s', 'p50 ms', 'p99 ms', 'gateway ops/s', 'p50 ms', 'p99 ms', 'ops/s ratio', 'p50 +ms', 'p99 +ms'],
      report.scenarios.map((row) => [
        ...whereOf(row),
        ...cellsOf(row.floor),
        ...cellsOf(row.gateway),
        fixed(row.throughputRatio, 2),
        fixed(row.p50OverheadMs, 2),
        fixed(row.p99OverheadMs, 2),
      ]),
    ),
    '',
    'Upstream calls per operation',
    table(
      ['operation', 'what', 'minimum', 'gateway', 'floor'],
      report.economy.map((row) => [row.operation, row.description, String(row.minUpstreamCalls), fixed(row.gatewayCallsPerOp, 2), fixed(row.floorCallsPerOp, 2)]),
    ),
    '',
    'Peak RSS (VmHWM) over the run',
    table(
      ['process', 'MiB'],
      Object.entries(report.peakRssMiB).map(([name, mib]) => [name, mib === null ? '-' : fixed(mib, 1)]),
    ),
    ...(report.identicalReads.length
      ? [
          '',
          'Identical dashboards: clients asking one operation at once with one credential (identical subgraph reads in flight are made once)',
          table(
            ['operation', 'emulator', 'conc', 'ops/s', 'p50 ms', 'p99 ms', 'upstream calls/request', 'alone'],
            report.identicalReads.map((row) => [
              ...whereOf(row),
              ...cellsOf(row.gateway),
              fixed(row.upstreamCallsPerRequest, 2),
              String(row.minUpstreamCalls),
            ]),
          ),
        ]
      : []),
    ...(report.twoHops.length ? ['', ...formatTwoHops(report.twoHops)] : []),
    '',
    'Enforcement: a gateway with trusted documents enforced (requests by id), caller and address rate limits and OTLP traces, against one with none (emulator 0 ms)',
    table(
      ['operation', 'conc', 'open ops/s', 'p50 ms', 'p99 ms', 'enforcing ops/s', 'p50 ms', 'p99 ms', 'ops/s ratio', 'p50 +ms'],
      report.enforcement.map((row) => [row.operation, String(row.concurrency), ...cellsOf(row.open), ...cellsOf(row.enforcing), fixed(row.throughputRatio, 2), fixed(row.p50OverheadMs, 2)]),
    ),
    '',
    'Targets',
    table(
      ['target', 'met', 'measured'],
      report.targets.map((row) => [row.target, row.met ? 'yes' : 'NO', row.detail]),
    ),
    '',
    'Subscriptions: a bonus given in the emulator, its webhook, to every subscriber (each its own connection, in processes apart from the benchmark);',
    'bare ws: the same subscribers served by a bare graphql-ws broadcaster that sends each event as one prebuilt frame with ws (its CPU in the gateway\'s column)',
    table(
      ['transport', 'server', 'subscribers', 'processes', 'p50 ms', 'p99 ms', 'lost', 'events/s', 'deliveries/s', 'gateway CPU µs/delivery', 'upstream streams', 'plans run/event', 'serialised/event', 'written directly/delivery', 'REST calls/event', 'gateway KiB/subscriber RSS', 'live heap'],
      report.subscriptions.map((row) => [
        row.transport,
        row.server,
        String(row.subscribers),
        String(row.subscriberProcesses),
        fixed(row.p50Ms, 2),
        fixed(row.p99Ms, 2),
        String(row.lost),
        fixed(row.eventsPerSec, 0),
        fixed(row.deliveriesPerSec, 0),
        fixed(row.gatewayCpuUsPerDelivery, 2),
        // The bare broadcaster keeps none of the gateway's counters.
        ...(row.server === 'bare ws' ? ['-', '-', '-'] : [String(row.upstreamStreams), fixed(row.executionsPerEvent, 2), fixed(row.serializationsPerEvent, 2)]),
        // graphql-ws's own loop is what the direct writes bypass; multipart has none.
        row.transport === 'graphql-ws' && row.server === 'gateway' ? fixed(row.directFramesPerDelivery, 2) : '-',
        fixed(row.upstreamCallsPerEvent, 2),
        fixed(row.gatewayRssKiBPerSubscriber, 1),
        row.server === 'bare ws' ? '-' : fixed(row.gatewayHeapKiBPerSubscriber, 1),
      ]),
    ),
  ];
  const twoHopsSides = report.twoHops.flatMap((row) => [row.floor, row.twoHops, row.gateway, ...[row.gatewayUnshared, row.gatewayUnbatched, row.oneProcess].filter((side): side is Summary => side !== undefined)]);
  const errors = [...report.scenarios.flatMap((row) => [row.floor, row.gateway]), ...twoHopsSides, ...report.identicalReads.map((row) => row.gateway), ...report.enforcement.flatMap((row) => [row.open, row.enforcing])].reduce((sum, side) => sum + side.errors, 0);
  if (errors) sections.push('', `${errors} operations FAILED during the load: the figures above are not trustworthy.`);
  const lost = report.subscriptions.reduce((sum, row) => sum + row.lost, 0);
  if (lost) sections.push('', `${lost} subscription deliveries were LOST.`);
  return sections.join('\n');
}

export function writeReport(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
