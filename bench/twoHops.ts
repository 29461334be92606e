import { isDeepStrictEqual } from 'node:util';
import { createGraphClient } from './clients.ts';
import { runLoad } from './load.ts';
import type { LoadSample } from './load.ts';
import { timeInRounds, type RoundSettings, type Sides } from './measure.ts';
import type { ReferenceOperation } from './operations.ts';
import { cpuMsOf, launch } from './processes.ts';
import type { Summary } from './stats.ts';

/** Every reference operation the hand-written reference serves: `products10` is not, its cursors being signed by the subgraph. */
const SERVED = ['reward', 'rewardCatalog', 'leaderboard100', 'redemptions20', 'product'];

/**
 * What the hand-written reference times beside the graph, per emulator latency. At concurrency 1,
 * the operations whose overhead sits nearest its target (`redemptions20` waits on two rounds of
 * upstream calls, so at 20 ms its processes wake cold twice), and with the 0 ms emulator a small
 * answer of each service (`reward`, `product`), where the hops are nearly all the overhead. At concurrency 32 with the 0 ms
 * emulator, every operation it serves: the graph's throughput against the least two node hops
 * cost, where both cores are saturated.
 */
export const TWO_HOPS_RUNS: readonly { emulatorLatencyMs: number; concurrency: number; operations: readonly string[] }[] = [
  { emulatorLatencyMs: 0, concurrency: 1, operations: ['reward', 'leaderboard100', 'product'] },
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
  /**
   * Beside it, a gateway that shares no read and sends each read in a request of its own
   * (GATEWAY_BATCH_READS=off too): what batching the reads of one credential is worth.
   */
  gatewayUnbatched?: Summary;
  unbatchedThroughputRatio?: number;
  /**
   * The one-process deployment (`stack/main.ts`: the gateway and every subgraph in one node
   * process, one hop instead of two), sharing no read, over the same emulators.
   */
  oneProcess?: Summary;
  /** Its p50 minus the floor's. */
  oneProcessOverheadMs?: number;
  /** Its throughput over the two hops'. */
  oneProcessThroughputRatio?: number;
  /** What each side's processes spent per operation over its timed rounds. */
  cpuUsPerOp: { twoHops: HopsCpu; gateway: HopsCpu; gatewayUnshared?: HopsCpu; gatewayUnbatched?: HopsCpu; oneProcess?: HopsCpu };
}

/**
 * CPU per operation of one side's processes, user and system, in µs: the first hop (the proxy, or
 * the gateway), the second (the mapper, or the subgraphs), the emulators, and the load's own client
 * (this process). Unlike throughput, which another tenant's burst moves by a third from one round
 * to the next on this machine, CPU per operation shows where the difference is.
 */
export interface HopsCpu {
  firstHop: number;
  secondHop: number;
  emulators: number;
  client: number;
}

/** The graph's processes, whose CPU is read while its sides are timed. */
export interface GraphProcesses {
  gateway: number;
  /** The gateway that shares no read, when it is timed. */
  gatewayUnshared?: number | undefined;
  /** The gateway that shares no read and batches none, when it is timed. */
  gatewayUnbatched?: number | undefined;
  /** The one-process deployment, when it is timed: its subgraphs run inside it. */
  oneProcess?: number | undefined;
  subgraphs: readonly number[];
  emulators: readonly number[];
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
  pids: { proxy: number; mapper: number };
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
    pids: { proxy: proxy.pid, mapper: mapper.pid },
    stop: async () => {
      await Promise.all([proxy.stop(), mapper.stop()]);
    },
  };
}

type TimedSide = 'floor' | 'twoHops' | 'gateway' | 'gatewayUnshared' | 'gatewayUnbatched' | 'oneProcess';
type Roles = Record<keyof HopsCpu, readonly number[]>;

/** Adds up, per side, the CPU its processes spend over its timed stretches and the operations done. */
function cpuAccounts(roles: Partial<Record<TimedSide, Roles | undefined>>) {
  const spent = new Map<TimedSide, { ms: HopsCpu; operations: number }>();
  const read = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
  const readAll = (of: Roles): HopsCpu => ({ firstHop: read(of.firstHop), secondHop: read(of.secondHop), emulators: read(of.emulators), client: read(of.client) });
  return {
    async around(side: TimedSide, stretch: () => Promise<LoadSample>): Promise<LoadSample> {
      const of = roles[side];
      if (!of) return stretch();
      const before = readAll(of);
      const sample = await stretch();
      const after = readAll(of);
      const account = spent.get(side) ?? { ms: { firstHop: 0, secondHop: 0, emulators: 0, client: 0 }, operations: 0 };
      for (const role of Object.keys(before) as (keyof HopsCpu)[]) account.ms[role] += after[role] - before[role];
      account.operations += sample.latenciesMs.length;
      spent.set(side, account);
      return sample;
    },
    perOperation(side: TimedSide): HopsCpu | undefined {
      const account = spent.get(side);
      if (!account) return undefined;
      const perOp = (ms: number) => (account.operations ? (ms * 1000) / account.operations : Number.NaN);
      return { firstHop: perOp(account.ms.firstHop), secondHop: perOp(account.ms.secondHop), emulators: perOp(account.ms.emulators), client: perOp(account.ms.client) };
    },
  };
}

/** The other graphs timed beside the default one, where they run. */
export interface OtherGraphs {
  /** A gateway that shares no read between identical requests (a fourth side at concurrency 32). */
  unsharedUrl?: string | undefined;
  /** One that batches no read either (a fifth). */
  unbatchedUrl?: string | undefined;
  /** The one-process deployment, sharing no read. */
  oneProcessUrl?: string | undefined;
}

/** Refuses to time a reference that does less than the graph: every side must answer the same data. */
export async function measureTwoHops(
  operation: ReferenceOperation,
  sides: Sides,
  stack: TwoHopsStack,
  headers: Record<string, string>,
  settings: TwoHopsSettings,
  graph: GraphProcesses,
  { unsharedUrl, unbatchedUrl, oneProcessUrl }: OtherGraphs = {},
): Promise<TwoHopsResult> {
  const client = createGraphClient(stack.graphqlUrl, headers, LOAD_WARMUP_CONCURRENCY);
  const others = {
    gatewayUnshared: unsharedUrl ? createGraphClient(unsharedUrl, headers, LOAD_WARMUP_CONCURRENCY) : undefined,
    gatewayUnbatched: unbatchedUrl ? createGraphClient(unbatchedUrl, headers, LOAD_WARMUP_CONCURRENCY) : undefined,
    oneProcess: oneProcessUrl ? createGraphClient(oneProcessUrl, headers, LOAD_WARMUP_CONCURRENCY) : undefined,
  };
  const timedOthers = (Object.keys(others) as (keyof typeof others)[]).filter((side) => others[side]);
  try {
    const body = JSON.stringify({ query: operation.query, variables: operation.variables });
    const all: Record<TimedSide, () => Promise<unknown>> = {
      ...sides,
      twoHops: () => client.execute(body),
      gatewayUnshared: () => (others.gatewayUnshared ?? client).execute(body),
      gatewayUnbatched: () => (others.gatewayUnbatched ?? client).execute(body),
      oneProcess: () => (others.oneProcess ?? client).execute(body),
    };
    const graphData = await sides.gateway();
    for (const side of ['twoHops', ...timedOthers] as const) {
      if (!isDeepStrictEqual(graphData, await all[side]())) throw new Error(`the ${side} side does not answer ${operation.name} as the graph does`);
    }

    // Bring each side to the state the graph's reached over the scenarios: the hops are fresh, and
    // the other graphs sat idle through them, so each is warmed on the operation it is timed on,
    // as the graph was.
    if (settings.loadWarmupMs > 0) for (const side of ['twoHops', ...timedOthers] as const) await runLoad(all[side], { concurrency: LOAD_WARMUP_CONCURRENCY, durationMs: settings.loadWarmupMs });
    const order: readonly TimedSide[] = ['floor', 'twoHops', 'gateway', ...timedOthers];
    const loadClient = [process.pid];
    const graphSide = (firstHop: number | undefined, secondHop: readonly number[]) => (firstHop ? { firstHop: [firstHop], secondHop, emulators: graph.emulators, client: loadClient } : undefined);
    const cpu = cpuAccounts({
      twoHops: { firstHop: [stack.pids.proxy], secondHop: [stack.pids.mapper], emulators: graph.emulators, client: loadClient },
      gateway: graphSide(graph.gateway, graph.subgraphs),
      gatewayUnshared: graphSide(graph.gatewayUnshared, graph.subgraphs),
      gatewayUnbatched: graphSide(graph.gatewayUnbatched, graph.subgraphs),
      oneProcess: graphSide(graph.oneProcess, []),
    });
    // As many rounds as sides, each side first in one of them.
    const timed = (await timeInRounds(`two hops ${operation.name}`, all, order, { ...settings, rounds: Math.max(settings.rounds, order.length) }, cpu.around)) as Partial<Record<TimedSide, Summary>>;
    const { floor, twoHops, gateway } = timed as Record<'floor' | 'twoHops' | 'gateway', Summary>;
    const { gatewayUnshared, gatewayUnbatched, oneProcess } = timed;
    const cpuOf = (side: TimedSide) => (timed[side] ? cpu.perOperation(side) : undefined);
    const unsharedCpu = cpuOf('gatewayUnshared');
    const unbatchedCpu = cpuOf('gatewayUnbatched');
    const oneProcessCpu = cpuOf('oneProcess');
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
      ...(gatewayUnbatched ? { gatewayUnbatched, unbatchedThroughputRatio: gatewayUnbatched.opsPerSec / twoHops.opsPerSec } : {}),
      ...(oneProcess ? { oneProcess, oneProcessOverheadMs: oneProcess.p50Ms - floor.p50Ms, oneProcessThroughputRatio: oneProcess.opsPerSec / twoHops.opsPerSec } : {}),
      cpuUsPerOp: {
        twoHops: cpu.perOperation('twoHops')!,
        gateway: cpu.perOperation('gateway')!,
        ...(unsharedCpu ? { gatewayUnshared: unsharedCpu } : {}),
        ...(unbatchedCpu ? { gatewayUnbatched: unbatchedCpu } : {}),
        ...(oneProcessCpu ? { oneProcess: oneProcessCpu } : {}),
      },
    };
  } finally {
    await Promise.all([client.close(), ...Object.values(others).map((other) => other?.close())]);
  }
}
