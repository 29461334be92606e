import type { GraphClient, UpstreamClient } from './clients.ts';
import { runLoad, type LoadSample } from './load.ts';
import type { ReferenceOperation } from './operations.ts';
import { scenarioResult, type EconomyResult, type ScenarioResult } from './report.ts';
import type { EmulatorControl } from './stack.ts';
import { summarize } from './stats.ts';

export interface Sides {
  floor: () => Promise<unknown>;
  gateway: () => Promise<Record<string, unknown>>;
}

export interface ScenarioSettings {
  concurrency: number;
  emulatorLatencyMs: number;
  warmupMs: number;
  roundMs: number;
  rounds: number;
}

export function sidesOf(operation: ReferenceOperation, graph: GraphClient, upstream: UpstreamClient): Sides {
  const body = JSON.stringify({ query: operation.query, variables: operation.variables });
  return { floor: () => operation.floor(upstream), gateway: () => graph.execute(body) };
}

/** Fails loudly before any timing when either side does not fetch what the operation asks for. */
export async function verify(operation: ReferenceOperation, sides: Sides): Promise<void> {
  const problem = operation.check(await sides.gateway());
  if (problem) throw new Error(`${operation.name} through the gateway: ${problem}`);
  await sides.floor();
}

/**
 * Both sides at one concurrency: warm-up, then rounds that alternate which side goes first, so a
 * drift in the machine's speed (another tenant, a thermal limit) falls on both sides alike.
 */
export async function measureScenario(operation: ReferenceOperation, sides: Sides, settings: ScenarioSettings): Promise<ScenarioResult> {
  const { concurrency, warmupMs, roundMs, rounds } = settings;
  await runLoad(sides.floor, { concurrency, durationMs: warmupMs });
  await runLoad(sides.gateway, { concurrency, durationMs: warmupMs });
  const samples: Record<keyof Sides, LoadSample[]> = { floor: [], gateway: [] };
  for (let round = 0; round < rounds; round += 1) {
    const order: (keyof Sides)[] = round % 2 === 0 ? ['floor', 'gateway'] : ['gateway', 'floor'];
    for (const side of order) samples[side].push(await runLoad(sides[side], { concurrency, durationMs: roundMs }));
  }
  const pooled = (side: keyof Sides) => {
    const list = samples[side];
    const failure = list.find((sample) => sample.firstError)?.firstError;
    if (failure) console.error(`  ${operation.name} ${side}: ${failure}`);
    return summarize(
      list.flatMap((sample) => sample.latenciesMs),
      list.reduce((sum, sample) => sum + sample.elapsedMs, 0),
      list.reduce((sum, sample) => sum + sample.errors, 0),
    );
  };
  return scenarioResult(operation.name, settings.emulatorLatencyMs, concurrency, pooled('floor'), pooled('gateway'));
}

async function callsPerOperation(run: () => Promise<unknown>, emulators: readonly EmulatorControl[], times: number): Promise<number> {
  await Promise.all(emulators.map((emulator) => emulator.clearRequests()));
  for (let index = 0; index < times; index += 1) await run();
  const counts = await Promise.all(emulators.map((emulator) => emulator.callCount()));
  return counts.reduce((sum, count) => sum + count, 0) / times;
}

/** Upstream calls per operation, read from the emulators' own request logs, on each side. */
export async function measureEconomy(operation: ReferenceOperation, sides: Sides, emulators: readonly EmulatorControl[], times: number): Promise<EconomyResult> {
  return {
    operation: operation.name,
    description: operation.description,
    minUpstreamCalls: operation.minUpstreamCalls,
    gatewayCallsPerOp: await callsPerOperation(sides.gateway, emulators, times),
    floorCallsPerOp: await callsPerOperation(sides.floor, emulators, times),
  };
}
