import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Pool, request } from 'undici';
import WebSocket from 'ws';
import { cpuMsOf, RUNTIME_FLAGS } from './processes.ts';
import { percentile } from './stats.ts';
import { monotonicMs, type FromSubscribers, type SubscriberProcessSettings, type SubscriberTransport, type ToSubscribers } from './subscriberProcess.ts';

/** One subscriber count: latency of each delivery, then the event rate all subscribers keep up with. */
export interface SubscriptionResult {
  /** How every subscriber of the row subscribed. */
  transport: SubscriberTransport;
  /** What served them: the graph, or a bare `ws` broadcast of one prebuilt frame (`bench/broadcaster.ts`, graphql-ws only). */
  server: 'gateway' | 'bare ws';
  subscribers: number;
  /** Processes the subscribers ran in, none of them the benchmark's own. */
  subscriberProcesses: number;
  /** Events timed one at a time, each awaited by every subscriber before the next. */
  events: number;
  /** Trigger to client: the emulator's webhook POST, the subgraph's ingestion and log, the gateway's execution and fan-out. */
  p50Ms: number;
  p99Ms: number;
  /** Deliveries that never came (any is a bug). */
  lost: number;
  /** Events per second fully delivered to every subscriber, with several in flight. */
  eventsPerSec: number;
  deliveriesPerSec: number;
  /**
   * The gateway's (or the bare broadcaster's) CPU time over the sustained stretch per delivery, in µs: what a delivery costs it
   * whatever else the machine runs (its whole work for the events included, not only the fan-out).
   */
  gatewayCpuUsPerDelivery: number;
  /** Subscription streams the gateway held open to the subgraph: one, whatever the subscriber count. */
  upstreamStreams: number;
  /** Query plans the gateway ran per timed event: one, whatever the subscriber count. */
  executionsPerEvent: number;
  /** Payloads the gateway serialised per timed event: one, whatever the subscriber count (NaN with GATEWAY_SHARED_PAYLOADS off). */
  serializationsPerEvent: number;
  /** Deliveries whose frame the gateway wrote straight to the subscriber's socket (1 when graphql-ws's per-subscriber loop is bypassed for all; NaN with GATEWAY_SHARED_PAYLOADS off). */
  directFramesPerDelivery: number;
  /** Calls to the REST API per timed event (an event costs none: the webhook brings it). */
  upstreamCallsPerEvent: number;
  /** The gateway's resident set grown by the idle subscribers (each its own connection), per subscriber, in KiB: native memory included, and whatever the heap grew by. */
  gatewayRssKiBPerSubscriber: number;
  /** Its live JS heap grown by them (read after a full collection), per subscriber, in KiB. */
  gatewayHeapKiBPerSubscriber: number;
}

export interface SubscriptionSettings {
  /** Counts of identical subscribers over graphql-ws, the targets' measurement. */
  subscriberCounts: readonly number[];
  /** The same over multipart HTTP, measured after them. */
  multipartSubscriberCounts: readonly number[];
  /** The same subscribers served by a bare `ws` broadcaster instead of the graph, measured last. */
  bareWsSubscriberCounts: readonly number[];
  /** Events timed one at a time per subscriber count (a third as many from 10,000 subscribers: each is 10,000 samples). */
  events: number;
  sustainedMs: number;
  /** Events in flight during the sustained stretch. */
  window: number;
}

/** Identical for every subscriber, as a dashboard's clients would be: the gateway shares one upstream stream. */
const SUBSCRIPTION = 'subscription Bonuses($tag: String) { bonusCreated(filter: { hashtag: $tag }) { id occurredAt bonus { id amount reason hashtag giver { id displayName } } } }';
const HASHTAG = '#benchmark';
const DELIVERY_TIMEOUT_MS = 10_000;
/** While the subscriptions are not yet live, an event may reach nobody: try again soon. */
const WARMUP_TIMEOUT_MS = 250;

/** Subscribers one process holds at most: 10,000 subscribers run in four. */
const SUBSCRIBERS_PER_PROCESS = 2500;
const SUBSCRIBER_ENTRY = new URL('./subscriberProcess.ts', import.meta.url).pathname;
const BROADCASTER_ENTRY = new URL('./broadcaster.ts', import.meta.url).pathname;

/** The bare broadcaster in a process of its own, as the gateway is. */
async function startBroadcaster(): Promise<{ origin: string; pid: number; stop(): Promise<void> }> {
  const child = fork(BROADCASTER_ENTRY, [], { execArgv: [...RUNTIME_FLAGS, '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the broadcaster exited (${code}) before it listened`)));
    child.once('message', (message: { port: number }) => resolve(message.port));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await exited;
  };
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid!, stop };
}

interface Pending {
  sentAt: number;
  remaining: number;
  latenciesMs: number[];
  done: () => void;
}

/** The gateway process as the benchmark sees it from outside. */
export interface GatewayProcess {
  graphqlUrl: string;
  pid: number;
  /** Its inspector (`--inspect`), through which garbage is collected before the live heap is read. */
  inspectorUrl: string | undefined;
}

/** The gateway's live JS heap: a full collection through its inspector, then the heap in use. NaN without an inspector. */
async function liveHeapBytes(inspectorUrl: string | undefined): Promise<number> {
  if (!inspectorUrl) return Number.NaN;
  const socket = new WebSocket(inspectorUrl);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  try {
    let id = 0;
    const call = (method: string) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const mine = (id += 1);
        const listen = (data: WebSocket.RawData) => {
          const message = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown> };
          if (message.id !== mine) return;
          socket.off('message', listen);
          resolve(message.result ?? {});
        };
        socket.on('message', listen);
        socket.send(JSON.stringify({ id: mine, method }));
      });
    await call('HeapProfiler.collectGarbage');
    return Number((await call('Runtime.getHeapUsage')).usedSize);
  } finally {
    socket.close();
  }
}

function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** Starts processes holding `subscribers` subscriptions between them; resolves once every one is sent. */
async function startSubscribers(settings: Omit<SubscriberProcessSettings, 'subscribers'>, subscribers: number, onMessage: (message: FromSubscribers) => void) {
  const processes = Math.ceil(subscribers / SUBSCRIBERS_PER_PROCESS);
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        if (child.connected) child.disconnect();
        else child.kill('SIGTERM');
        return exited;
      }),
    );
  };
  try {
    await Promise.all(
      Array.from({ length: processes }, (_, index) => {
        const share = Math.floor(subscribers / processes) + (index < subscribers % processes ? 1 : 0);
        const child = fork(SUBSCRIBER_ENTRY, [], {
          execArgv: [...RUNTIME_FLAGS, '--import', 'tsx'],
          env: { ...process.env, BENCH_SUBSCRIBER_SETTINGS: JSON.stringify({ ...settings, subscribers: share }) },
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        });
        children.push(child);
        return new Promise<void>((resolve, reject) => {
          child.once('exit', (code) => reject(new Error(`a subscriber process exited (${code}) before its subscribers were ready`)));
          child.on('message', (message: FromSubscribers) => {
            if (message.type === 'ready') resolve();
            else if (message.type === 'failure') reject(new Error(message.message));
            onMessage(message);
          });
        });
      }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { processes, tell: (message: ToSubscribers) => children.forEach((child) => child.send(message)), stop };
}

/**
 * Webhook-to-client latency, sustained deliveries and the gateway's memory per idle subscriber,
 * with the subscribers in processes of their own (`bench/subscriberProcess.ts`), each its own
 * graphql-ws connection. An event is a bonus given through the recognition emulator's control
 * surface, which then POSTs the service's webhook to the subgraph exactly as the real service would.
 */
export async function measureSubscriptions(
  gateway: GatewayProcess,
  emulatorOrigin: string,
  connectionParams: Record<string, string>,
  settings: SubscriptionSettings,
  onResult: (result: SubscriptionResult) => void = () => undefined,
): Promise<SubscriptionResult[]> {
  const { graphqlUrl } = gateway;
  const emulator = new Pool(emulatorOrigin, { connections: settings.window });
  const gatewayMetrics = async () => {
    const text = await (await fetch(graphqlUrl.replace(/\/graphql$/, '/metrics'))).text();
    const read = (name: string) => Number(new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
    return {
      executions: read('gateway_subscription_executions_total'),
      upstreams: read('gateway_subscription_upstreams'),
      subscribers: read('gateway_subscription_subscribers'),
      serializations: read('gateway_stream_payloads_serialized_total'),
      directFrames: read('gateway_stream_frames_written_total'),
    };
  };
  const upstreamCalls = async () => ((await (await fetch(`${emulatorOrigin}/__emulator/counters`)).json()) as { total: number }).total;
  const pending = new Map<string, Pending>();
  const collected = new Map<string, () => void>();
  let sequence = 0;

  const arrived = (reason: string, arrivals: readonly number[]) => {
    const entry = pending.get(reason);
    if (!entry) return;
    for (const at of arrivals) entry.latenciesMs.push(at - entry.sentAt);
    entry.remaining -= arrivals.length;
    if (entry.remaining === 0) entry.done();
  };

  const results: SubscriptionResult[] = [];
  let broadcaster: Awaited<ReturnType<typeof startBroadcaster>> | undefined;
  try {
    const runs = [
      ...settings.subscriberCounts.map((subscribers) => ({ transport: 'graphql-ws' as const, server: 'gateway' as const, subscribers })),
      ...settings.multipartSubscriberCounts.map((subscribers) => ({ transport: 'multipart' as const, server: 'gateway' as const, subscribers })),
      ...settings.bareWsSubscriberCounts.map((subscribers) => ({ transport: 'graphql-ws' as const, server: 'bare ws' as const, subscribers })),
    ];
    for (const { transport, server, subscribers } of runs) {
      const bare = server === 'bare ws' ? (broadcaster ??= await startBroadcaster()) : undefined;
      const pid = bare?.pid ?? gateway.pid;
      /** The subscriptions the server holds. */
      const held = async () => (bare ? Number(await (await fetch(`${bare.origin}/subscribers`)).text()) : (await gatewayMetrics()).subscribers);
      // The broadcaster keeps no metrics and has no inspector: its counters and heap are not measured.
      const counters = async () => (bare ? { executions: Number.NaN, upstreams: Number.NaN, subscribers: Number.NaN, serializations: Number.NaN, directFrames: Number.NaN } : gatewayMetrics());
      const heapBytes = () => (bare ? Promise.resolve(Number.NaN) : liveHeapBytes(gateway.inspectorUrl));
      const failures: string[] = [];
      const heapBefore = await heapBytes();
      const rssBefore = residentBytes(pid);
      const group = await startSubscribers({ transport, url: bare ? `${bare.origin}/graphql` : graphqlUrl, connectionParams, query: SUBSCRIPTION, variables: { tag: HASHTAG } }, subscribers, (message) => {
        if (message.type === 'failure') failures.push(message.message);
        if (message.type === 'delivered' || message.type === 'collected') arrived(message.reason, message.arrivals);
        if (message.type === 'collected') collected.get(message.reason)?.();
      });

      /** Gives one bonus and resolves with each subscriber's latency once all have it (or the timeout passed). */
      const event = async (timeoutMs = DELIVERY_TIMEOUT_MS): Promise<{ latenciesMs: number[]; lost: number }> => {
        const reason = `benchmark event ${(sequence += 1)}`;
        let done!: () => void;
        const delivered = new Promise<void>((resolve) => (done = resolve));
        const entry: Pending = { sentAt: monotonicMs(), remaining: subscribers, latenciesMs: [], done };
        pending.set(reason, entry);
        const response = bare
          ? await request(`${bare.origin}/events`, { method: 'POST', body: JSON.stringify({ reason }) })
          : await emulator.request({
              method: 'POST',
              path: '/__emulator/bonuses',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: HASHTAG, amount: 10, reason }),
            });
        await response.body.dump();
        if (response.statusCode !== 201) throw new Error(`the ${bare ? 'broadcaster' : 'emulator'} refused to give a bonus: ${response.statusCode}`);
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([delivered.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
        clearTimeout(timer);
        if (timedOut) {
          // Every process says what it has: a process that had all of it already said so.
          let answers = 0;
          await new Promise<void>((resolve) => {
            collected.set(reason, () => {
              answers += 1;
              if (answers === group.processes) resolve();
            });
            group.tell({ type: 'collect', reason });
          });
          collected.delete(reason);
        }
        pending.delete(reason);
        return { latenciesMs: entry.latenciesMs, lost: entry.remaining };
      };

      try {
        // The gateway holds every subscription (they go live asynchronously): only then is memory read and an event given.
        const settleBy = Date.now() + 60_000;
        while ((await held()) !== subscribers) {
          if (failures.length || Date.now() > settleBy) throw new Error(`${subscribers} subscribers never all subscribed: ${failures[0] ?? 'timeout'}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const heapAfter = await heapBytes();
        const rssAfter = residentBytes(pid);
        // The upstream stream goes live asynchronously too: give bonuses until one reaches everybody,
        // allowing a fan-out to thousands its time on a busy machine.
        const warmupTimeoutMs = Math.max(WARMUP_TIMEOUT_MS, subscribers / 5);
        const warmBy = Date.now() + 60_000;
        while ((await event(warmupTimeoutMs)).lost > 0) {
          if (failures.length || Date.now() > warmBy) throw new Error(`${subscribers} subscribers never all received an event: ${failures[0] ?? 'timeout'}`);
        }
        const latenciesMs: number[] = [];
        let lost = 0;
        const [before, callsBefore] = await Promise.all([counters(), upstreamCalls()]);
        const events = subscribers >= 10_000 ? Math.ceil(settings.events / 3) : settings.events;
        for (let index = 0; index < events; index += 1) {
          const outcome = await event();
          latenciesMs.push(...outcome.latenciesMs);
          lost += outcome.lost;
        }
        const [after, callsAfter] = await Promise.all([counters(), upstreamCalls()]);
        let delivered = 0;
        const cpuBefore = cpuMsOf(pid);
        const started = performance.now();
        const deadline = started + settings.sustainedMs;
        await Promise.all(
          Array.from({ length: settings.window }, async () => {
            while (performance.now() < deadline) {
              const outcome = await event();
              lost += outcome.lost;
              if (outcome.lost === 0) delivered += 1;
            }
          }),
        );
        const elapsedS = (performance.now() - started) / 1000;
        const gatewayCpuMs = cpuMsOf(pid) - cpuBefore;
        if (failures.length) throw new Error(`a subscriber failed: ${failures[0]}`);
        const sorted = latenciesMs.sort((a, b) => a - b);
        results.push({
          transport,
          server,
          subscribers,
          subscriberProcesses: group.processes,
          events,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          lost,
          eventsPerSec: delivered / elapsedS,
          deliveriesPerSec: (delivered * subscribers) / elapsedS,
          gatewayCpuUsPerDelivery: (gatewayCpuMs * 1000) / (delivered * subscribers),
          upstreamStreams: after.upstreams,
          executionsPerEvent: (after.executions - before.executions) / events,
          serializationsPerEvent: (after.serializations - before.serializations) / events,
          directFramesPerDelivery: (after.directFrames - before.directFrames) / (events * subscribers),
          upstreamCallsPerEvent: (callsAfter - callsBefore) / events,
          gatewayRssKiBPerSubscriber: (rssAfter - rssBefore) / 1024 / subscribers,
          gatewayHeapKiBPerSubscriber: (heapAfter - heapBefore) / 1024 / subscribers,
        });
        onResult(results.at(-1)!);
      } finally {
        await group.stop();
        // The next count starts from a gateway that has let these go.
        const goneBy = Date.now() + 30_000;
        while ((await held()) !== 0 && Date.now() < goneBy) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } finally {
    await Promise.all([emulator.close(), broadcaster?.stop()]);
  }
  return results;
}
