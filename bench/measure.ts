import type { GraphClient, UpstreamClient } from './clients.ts';
import { runLoad, type LoadSample } from './load.ts';
import type { ReferenceOperation } from './operations.ts';
import { scenarioResult, type EconomyResult, type ScenarioResult } from './report.ts';
import type { EmulatorControl } from './stack.ts';
import { summarize, type Summary } from './stats.ts';

export interface Sides {
  floor: () => Promise<unknown>;
  gateway: () => Promise<Record<string, unknown>>;
}

export interface ScenarioSettings extends RoundSettings {
  emulatorLatencyMs: number;
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

export interface RoundSettings {
  concurrency: number;
  warmupMs: number;
  roundMs: number;
  rounds: number;
}

/**
 * Warms each side up, then times them in rounds, each round starting with the next side, so a
 * drift in the machine's speed (another tenant, a thermal limit) falls on every side alike.
 */
export async function timeInRounds<Side extends string>(
  label: string,
  sides: Record<Side, () => Promise<unknown>>,
  order: readonly Side[],
  { concurrency, warmupMs, roundMs, rounds }: RoundSettings,
  /** Runs each timed stretch (not the warm-up), to watch what it costs beside its timing. */
  around: (side: Side, stretch: () => Promise<LoadSample>) => Promise<LoadSample> = (_side, stretch) => stretch(),
): Promise<Record<Side, Summary>> {
  for (const side of order) await runLoad(sides[side], { concurrency, durationMs: warmupMs });
  const samples = new Map<Side, LoadSample[]>(order.map((side) => [side, []]));
  for (let round = 0; round < rounds; round += 1) {
    const shift = round % order.length;
    for (const side of [...order.slice(shift), ...order.slice(0, shift)]) samples.get(side)!.push(await around(side, () => runLoad(sides[side], { concurrency, durationMs: roundMs })));
  }
  const summaries = {} as Record<Side, Summary>;
  for (const [side, list] of samples) {
    const failure = list.find((sample) => sample.firstError)?.firstError;
    if (failure) console.error(`  ${label} ${side}: ${failure}`);
    summaries[side] = summarize(
      list.flatMap((sample) => sample.latenciesMs),
      list.reduce((sum, sample) => sum + sample.elapsedMs, 0),
      list.reduce((sum, sample) => sum + sample.errors, 0),
    );
  }
  return summaries;
}

/** Both sides at one concurrency, in alternating rounds. */
export async function measureScenario(operation: ReferenceOperation, sides: Sides, settings: ScenarioSettings): Promise<ScenarioResult> {
  const { floor, gateway } = await timeInRounds(operation.name, sides, ['floor', 'gateway'], settings);
  return scenarioResult(operation.name, settings.emulatorLatencyMs, settings.concurrency, floor, gateway);
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
