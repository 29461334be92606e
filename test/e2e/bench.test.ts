import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchReport } from '../../bench/report.ts';
import { SERVICES } from '../../stack/services.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runBench(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bench/run.ts'], { cwd: root, env: { ...process.env, ...env }, timeout: 180_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run bench', () => {
  it('runs the whole stack as processes and reports both sides, upstream calls, memory and subscriptions', { timeout: 180_000 }, async () => {
    const out = join(dir, 'report.json');
    const operations = ['reward', 'leaderboard100', 'redemptions20'];
    const run = await runBench({ BENCH_QUICK: '1', BENCH_OPS: operations.join(','), BENCH_OUT: out });
    expect(run.code, run.stderr).toBe(0);

    const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport;
    expect(report.meta.quick).toBe(true);
    expect(report.economy).toEqual([
      { operation: 'reward', description: 'a reward by id', minUpstreamCalls: 1, gatewayCallsPerOp: 1, floorCallsPerOp: 1 },
      { operation: 'leaderboard100', description: 'a leaderboard of 100 users', minUpstreamCalls: 1, gatewayCallsPerOp: 1, floorCallsPerOp: 1 },
      { operation: 'redemptions20', description: '20 redemptions with their rewards', minUpstreamCalls: 28, gatewayCallsPerOp: 28, floorCallsPerOp: 28 },
    ]);
    // Every operation at each emulator latency, then each concurrency, in that order.
    const expectedScenarios = [0, 20].flatMap((latency) => operations.flatMap((operation) => [1, 32].map((concurrency) => [operation, latency, concurrency])));
    expect(report.scenarios.map(({ operation, emulatorLatencyMs, concurrency }) => [operation, emulatorLatencyMs, concurrency])).toEqual(expectedScenarios);
    for (const scenario of report.scenarios) {
      for (const side of [scenario.floor, scenario.gateway]) {
        expect(side.errors).toBe(0);
        expect(side.n).toBeGreaterThan(0);
      }
    }
    // The hand-written two hops answered the same data as the graph (checked before timing) and were timed beside it.
    expect(report.twoHops.map(({ operation, emulatorLatencyMs }) => [operation, emulatorLatencyMs])).toEqual([
      ['leaderboard100', 0],
      ['leaderboard100', 20],
      ['redemptions20', 20],
    ]);
    for (const twoHops of report.twoHops) {
      for (const side of [twoHops.floor, twoHops.twoHops, twoHops.gateway]) {
        expect(side.errors).toBe(0);
        expect(side.n).toBeGreaterThan(0);
      }
      expect(twoHops.graphOverTwoHopsMs).toBeCloseTo(twoHops.gateway.p50Ms - twoHops.twoHops.p50Ms, 9);
    }
    // At 20 ms every answer waits for the emulator: so does every side's median.
    const at20 = report.twoHops.filter((row) => row.emulatorLatencyMs === 20);
    expect(Math.min(...at20.flatMap((row) => [row.floor.p50Ms, row.twoHops.p50Ms, row.gateway.p50Ms]))).toBeGreaterThanOrEqual(20);
    // Two rounds of upstream calls, each waiting 20 ms.
    expect(Math.min(...at20.filter((row) => row.operation === 'redemptions20').flatMap((row) => [row.floor.p50Ms, row.twoHops.p50Ms, row.gateway.p50Ms]))).toBeGreaterThanOrEqual(40);
    expect(run.stdout).toContain('What two hops cost on this machine');
    // Its processes are the benchmark's own, not the graph's: they are not in the memory table.
    const processes = ['gateway', ...SERVICES.flatMap((service) => [`${service.name}-emulator`, `${service.name}-subgraph`])];
    expect(Object.keys(report.peakRssMiB).sort()).toEqual(processes.sort());
    for (const mib of Object.values(report.peakRssMiB)) expect(mib).toBeGreaterThan(0);
    expect(report.targets.find((target) => target.target.includes('upstream calls'))?.met).toBe(true);
    // However many identical subscribers: one upstream stream, one plan per event, no REST call.
    expect(report.subscriptions.map(({ subscribers, lost, upstreamStreams, executionsPerEvent, upstreamCallsPerEvent }) => ({ subscribers, lost, upstreamStreams, executionsPerEvent, upstreamCallsPerEvent }))).toEqual([
      { subscribers: 1, lost: 0, upstreamStreams: 1, executionsPerEvent: 1, upstreamCallsPerEvent: 0 },
      { subscribers: 10, lost: 0, upstreamStreams: 1, executionsPerEvent: 1, upstreamCallsPerEvent: 0 },
    ]);
    expect(run.stdout).toContain('Upstream calls per operation');
  });
});
