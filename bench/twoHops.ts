import { isDeepStrictEqual } from 'node:util';
import { createGraphClient } from './clients.ts';
import { runLoad } from './load.ts';
import { timeInRounds, type RoundSettings, type Sides } from './measure.ts';
import type { ReferenceOperation } from './operations.ts';
import { launch } from './processes.ts';
import type { Summary } from './stats.ts';

/** Every reference operation the hand-written reference serves: `products10` is not, its cursors being signed by the subgraph. */
const SERVED = ['reward', 'rewardCatalog', 'leaderboard100', 'redemptions20', 'product'];

/**
 * What the hand-written reference times beside the graph, per emulator latency. At concurrency 1,
 * the operations whose overhead sits nearest its target (`redemptions20` waits on two rounds of
 * upstream calls, so at 20 ms its processes wake cold twice). At concurrency 32 with the 0 ms
 * emulator, every operation it serves: the graph's throughput against the least two node hops
 * cost, where both cores are saturated.
 */
export const TWO_HOPS_RUNS: readonly { emulatorLatencyMs: number; concurrency: number; operations: readonly string[] }[] = [
  { emulatorLatencyMs: 0, concurrency: 1, operations: ['leaderboard100'] },
  { emulatorLatencyMs: 0, concurrency: 32, operations: SERVED },
  { emulatorLatencyMs: 20, concurrency: 1, operations: ['leaderboard100', 'redemptions20'] },
];

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
  /** The graph's throughput over the two hops': 1 would be a graph as cheap as two bare hops. */
  throughputRatio: number;
  /**
   * At concurrency 32, a second gateway with GATEWAY_DEDUPE_READS=off over the same subgraphs: the
   * hops share nothing between identical requests, so this is the graph's own cost against theirs.
   */
  gatewayUnshared?: Summary;
  unsharedThroughputRatio?: number;
}

export interface TwoHopsSettings extends RoundSettings {
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
export async function launchTwoHops(recognitionOrigin: string, marketplaceOrigin: string): Promise<TwoHopsStack> {
  const mapper = await launch({ name: 'two-hops-mapper', entry: 'bench/twoHops/mapper.ts', env: { TWO_HOPS_UPSTREAM: recognitionOrigin, TWO_HOPS_MARKETPLACE: marketplaceOrigin } });
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

/**
 * Refuses to time a reference that does less than the graph: both must answer the same data.
 * `unsharedUrl`: a gateway that shares no read between identical requests, timed as a fourth side.
 */
export async function measureTwoHops(operation: ReferenceOperation, sides: Sides, stack: TwoHopsStack, headers: Record<string, string>, settings: TwoHopsSettings, unsharedUrl?: string): Promise<TwoHopsResult> {
  const client = createGraphClient(stack.graphqlUrl, headers, LOAD_WARMUP_CONCURRENCY);
  const unsharedClient = unsharedUrl ? createGraphClient(unsharedUrl, headers, LOAD_WARMUP_CONCURRENCY) : undefined;
  try {
    const body = JSON.stringify({ query: operation.query, variables: operation.variables });
    const all = { ...sides, twoHops: () => client.execute(body), gatewayUnshared: () => (unsharedClient ?? client).execute(body) };
    const graphData = await all.gateway();
    for (const [side, data] of [
      ['two-hops reference', await all.twoHops()],
      ['unshared gateway', await all.gatewayUnshared()],
    ] as const) {
      if (!isDeepStrictEqual(graphData, data)) throw new Error(`the ${side} does not answer ${operation.name} as the graph does`);
    }

    // Fresh processes: bring their code to the optimised state the graph's reached over the scenarios.
    if (settings.loadWarmupMs > 0) await runLoad(all.twoHops, { concurrency: LOAD_WARMUP_CONCURRENCY, durationMs: settings.loadWarmupMs });
    const order = unsharedClient ? (['floor', 'twoHops', 'gateway', 'gatewayUnshared'] as const) : (['floor', 'twoHops', 'gateway'] as const);
    const { floor, twoHops, gateway, gatewayUnshared } = (await timeInRounds(`two hops ${operation.name}`, all, order, settings)) as Record<(typeof order)[number], Summary> & { gatewayUnshared?: Summary };
    return {
      operation: operation.name,
      concurrency: settings.concurrency,
      emulatorLatencyMs: settings.emulatorLatencyMs,
      floor,
      twoHops,
      gateway,
      twoHopsOverheadMs: twoHops.p50Ms - floor.p50Ms,
      gatewayOverheadMs: gateway.p50Ms - floor.p50Ms,
      graphOverTwoHopsMs: gateway.p50Ms - twoHops.p50Ms,
      throughputRatio: gateway.opsPerSec / twoHops.opsPerSec,
      ...(gatewayUnshared ? { gatewayUnshared, unsharedThroughputRatio: gatewayUnshared.opsPerSec / twoHops.opsPerSec } : {}),
    };
  } finally {
    await Promise.all([client.close(), unsharedClient?.close()]);
  }
}
