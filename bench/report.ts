import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Summary } from './stats.ts';
import type { SubscriptionResult, SubscriptionSettings } from './subscriptions.ts';
import type { TwoHopsResult } from './twoHops.ts';

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
  };
  economy: EconomyResult[];
  scenarios: ScenarioResult[];
  /** Peak resident set (VmHWM) of each process over the whole run, in MiB. */
  peakRssMiB: Record<string, number | null>;
  targets: TargetResult[];
  /** The graph against two hand-written hops, one entry per operation and emulator latency timed; empty when the run left those operations out. */
  twoHops: TwoHopsResult[];
  /** Webhook-to-client latency and sustained events per second, by number of identical subscribers. */
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

/** The issue's targets, judged on this run's figures. */
export function judgeTargets(economy: readonly EconomyResult[], scenarios: readonly ScenarioResult[]): TargetResult[] {
  const targets: TargetResult[] = [];
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
  return targets;
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

function formatTwoHops(rows: readonly TwoHopsResult[]): string[] {
  return [
    'What two hops cost on this machine: at concurrency 1, three sides in rotating rounds per operation and emulator latency',
    table(
      ['operation', 'emulator', 'side', 'ops/s', 'p50 ms', 'p99 ms', 'p50 +ms over the floor'],
      rows.flatMap((row) => {
        const where = [row.operation, `${row.emulatorLatencyMs} ms`];
        return [
          [...where, 'floor', fixed(row.floor.opsPerSec, 0), fixed(row.floor.p50Ms, 2), fixed(row.floor.p99Ms, 2), '-'],
          [...where, 'two hand-written hops', fixed(row.twoHops.opsPerSec, 0), fixed(row.twoHops.p50Ms, 2), fixed(row.twoHops.p99Ms, 2), fixed(row.twoHopsOverheadMs, 2)],
          [...where, 'gateway + subgraph', fixed(row.gateway.opsPerSec, 0), fixed(row.gateway.p50Ms, 2), fixed(row.gateway.p99Ms, 2), fixed(row.gatewayOverheadMs, 2)],
        ];
      }),
    ),
    `The graph's own share (its p50 minus the hand-written hops'): ${rows.map((row) => `${row.operation} ${fixed(row.graphOverTwoHopsMs, 2)} ms with the ${row.emulatorLatencyMs} ms emulator`).join(', ')}`,
  ];
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
    `${meta.settings.rounds} alternating rounds of ${meta.settings.roundMs} ms per side after ${meta.settings.warmupMs} ms of warm-up; servers run with ${meta.runtimeFlags.join(' ') || 'no flags'}`,
    '',
    'Latency and throughput: floor = straight to the emulator with undici; gateway = through gateway and subgraph',
    table(
      ['operation', 'emulator', 'conc', 'floor ops/s', 'p50 ms', 'p99 ms', 'gateway ops/s', 'p50 ms', 'p99 ms', 'ops/s ratio', 'p50 +ms', 'p99 +ms'],
      report.scenarios.map((row) => [
        row.operation,
        `${row.emulatorLatencyMs} ms`,
        String(row.concurrency),
        fixed(row.floor.opsPerSec, 0),
        fixed(row.floor.p50Ms, 2),
        fixed(row.floor.p99Ms, 2),
        fixed(row.gateway.opsPerSec, 0),
        fixed(row.gateway.p50Ms, 2),
        fixed(row.gateway.p99Ms, 2),
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
    ...(report.twoHops.length ? ['', ...formatTwoHops(report.twoHops)] : []),
    '',
    'Targets',
    table(
      ['target', 'met', 'measured'],
      report.targets.map((row) => [row.target, row.met ? 'yes' : 'NO', row.detail]),
    ),
    '',
    'Subscriptions over graphql-ws: a bonus given in the emulator, its webhook, to every subscriber',
    table(
      ['subscribers', 'p50 ms', 'p99 ms', 'lost', 'events/s', 'deliveries/s', 'upstream streams', 'plans run/event', 'REST calls/event'],
      report.subscriptions.map((row) => [
        String(row.subscribers),
        fixed(row.p50Ms, 2),
        fixed(row.p99Ms, 2),
        String(row.lost),
        fixed(row.eventsPerSec, 0),
        fixed(row.deliveriesPerSec, 0),
        String(row.upstreamStreams),
        fixed(row.executionsPerEvent, 2),
        fixed(row.upstreamCallsPerEvent, 2),
      ]),
    ),
  ];
  const twoHopsSides = report.twoHops.flatMap((row) => [row.floor, row.twoHops, row.gateway]);
  const errors = [...report.scenarios.flatMap((row) => [row.floor, row.gateway]), ...twoHopsSides].reduce((sum, side) => sum + side.errors, 0);
  if (errors) sections.push('', `${errors} operations FAILED during the load: the figures above are not trustworthy.`);
  const lost = report.subscriptions.reduce((sum, row) => sum + row.lost, 0);
  if (lost) sections.push('', `${lost} subscription deliveries were LOST.`);
  return sections.join('\n');
}

export function writeReport(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
