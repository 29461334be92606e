import { isDeepStrictEqual } from 'node:util';
import { createGraphClient } from './clients.ts';
import { runLoad } from './load.ts';
import { timeInRounds, type RoundSettings, type Sides } from './measure.ts';
import type { ReferenceOperation } from './operations.ts';
import { launch } from './processes.ts';
import type { Summary } from './stats.ts';

/**
 * The operations the hand-written reference serves, per emulator latency: those whose overhead sits
 * nearest its target. `redemptions20` waits on two rounds of upstream calls, so at 20 ms its
 * processes wake cold twice.
 */
export const TWO_HOPS_OPERATIONS: Readonly<Record<number, readonly string[]>> = { 0: ['leaderboard100'], 20: ['leaderboard100', 'redemptions20'] };

/**
 * The floor, the hand-written two hops and the graph, timed in the same rounds: how much of the
 * graph's overhead any gateway and subgraph pair of node processes pays on this machine, and how
 * much is the graph's own.
 */
export interface TwoHopsResult {
  operation: string;
  concurrency: number;
  /** How long the emulator waited before each answer, while all three sides were timed. */
  emulatorLatencyMs: number;
  floor: Summary;
  twoHops: Summary;
  gateway: Summary;
  /** Two bare hops' p50 minus the floor's: the architecture's own cost here. */
  twoHopsOverheadMs: number;
  /** The graph's p50 minus the floor's, as in the scenarios. */
  gatewayOverheadMs: number;
  /** The graph's p50 minus the two hops': what GraphQL, its checks and its generality add. */
  graphOverTwoHopsMs: number;
}

export interface TwoHopsSettings extends Omit<RoundSettings, 'concurrency'> {
  /** Load on the hops before any timing: freshly started, they need it; 0 once they have had it. */
  loadWarmupMs: number;
  /** The latency the emulator is set to, for the report. */
  emulatorLatencyMs: number;
}

const LOAD_WARMUP_CONCURRENCY = 32;

export interface TwoHopsStack {
  /** The proxy's endpoint, where the graph client posts. */
  graphqlUrl: string;
  stop(): Promise<void>;
}

/**
 * A gateway that only forwards bytes and a subgraph written by hand for the operations it times,
 * each its own node process started as the graph's are: the least two extra hops can cost.
 */
export async function launchTwoHops(recognitionOrigin: string): Promise<TwoHopsStack> {
  const mapper = await launch({ name: 'two-hops-mapper', entry: 'bench/twoHops/mapper.ts', env: { TWO_HOPS_UPSTREAM: recognitionOrigin } });
  const proxy = await launch({ name: 'two-hops-proxy', entry: 'bench/twoHops/proxy.ts', env: { TWO_HOPS_MAPPER: mapper.url } }).catch(async (error: unknown) => {
    await mapper.stop();
    throw error;
  });
  return {
    graphqlUrl: `${proxy.url}/graphql`,
    stop: async () => {
      await Promise.all([proxy.stop(), mapper.stop()]);
    },
  };
}

/** Refuses to time a reference that does less than the graph: both must answer the same data. */
export async function measureTwoHops(operation: ReferenceOperation, sides: Sides, stack: TwoHopsStack, headers: Record<string, string>, settings: TwoHopsSettings): Promise<TwoHopsResult> {
  const client = createGraphClient(stack.graphqlUrl, headers, LOAD_WARMUP_CONCURRENCY);
  try {
    const body = JSON.stringify({ query: operation.query, variables: operation.variables });
    const all = { ...sides, twoHops: () => client.execute(body) };
    const [graphData, twoHopsData] = [await all.gateway(), await all.twoHops()];
    if (!isDeepStrictEqual(graphData, twoHopsData)) throw new Error(`the two-hops reference does not answer ${operation.name} as the graph does`);

    // Fresh processes: bring their code to the optimised state the graph's reached over the scenarios.
    if (settings.loadWarmupMs > 0) await runLoad(all.twoHops, { concurrency: LOAD_WARMUP_CONCURRENCY, durationMs: settings.loadWarmupMs });
    const { floor, twoHops, gateway } = await timeInRounds(`two hops ${operation.name}`, all, ['floor', 'twoHops', 'gateway'], { ...settings, concurrency: 1 });
    return {
      operation: operation.name,
      concurrency: 1,
      emulatorLatencyMs: settings.emulatorLatencyMs,
      floor,
      twoHops,
      gateway,
      twoHopsOverheadMs: twoHops.p50Ms - floor.p50Ms,
      gatewayOverheadMs: gateway.p50Ms - floor.p50Ms,
      graphOverTwoHopsMs: gateway.p50Ms - twoHops.p50Ms,
    };
  } finally {
    await client.close();
  }
}
