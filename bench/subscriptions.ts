import { createClient, type Client } from 'graphql-ws';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { percentile } from './stats.ts';

/** One subscriber count: latency of each delivery, then the event rate all subscribers keep up with. */
export interface SubscriptionResult {
  subscribers: number;
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
  /** Subscription streams the gateway held open to the subgraph: one, whatever the subscriber count. */
  upstreamStreams: number;
  /** Query plans the gateway ran per timed event: one, whatever the subscriber count. */
  executionsPerEvent: number;
  /** Calls to the REST API per timed event (an event costs none: the webhook brings it). */
  upstreamCallsPerEvent: number;
}

export interface SubscriptionSettings {
  subscriberCounts: readonly number[];
  /** Events timed one at a time per subscriber count. */
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

interface Pending {
  sentAt: number;
  remaining: number;
  latenciesMs: number[];
  done: () => void;
}

/**
 * Webhook-to-client latency and sustained event rate, over graphql-ws. An event is a bonus given
 * through the recognition emulator's control surface, which then POSTs the service's webhook to the
 * subgraph exactly as the real service would.
 */
export async function measureSubscriptions(graphqlUrl: string, emulatorOrigin: string, connectionParams: Record<string, string>, settings: SubscriptionSettings): Promise<SubscriptionResult[]> {
  const emulator = new Pool(emulatorOrigin, { connections: settings.window });
  const gatewayMetrics = async () => {
    const text = await (await fetch(graphqlUrl.replace(/\/graphql$/, '/metrics'))).text();
    const read = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
    return { executions: read('gateway_subscription_executions_total'), upstreams: read('gateway_subscription_upstreams') };
  };
  const upstreamCalls = async () => ((await (await fetch(`${emulatorOrigin}/__emulator/counters`)).json()) as { total: number }).total;
  const pending = new Map<string, Pending>();
  let sequence = 0;

  const deliver = (reason: unknown) => {
    const entry = typeof reason === 'string' ? pending.get(reason) : undefined;
    if (!entry) return;
    entry.latenciesMs.push(performance.now() - entry.sentAt);
    entry.remaining -= 1;
    if (entry.remaining === 0) entry.done();
  };

  /** Gives one bonus and resolves with each subscriber's latency once all have it (or the timeout passed). */
  async function event(subscribers: number, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<{ latenciesMs: number[]; lost: number }> {
    const reason = `benchmark event ${(sequence += 1)}`;
    let done!: () => void;
    const delivered = new Promise<void>((resolve) => (done = resolve));
    const entry: Pending = { sentAt: performance.now(), remaining: subscribers, latenciesMs: [], done };
    pending.set(reason, entry);
    const response = await emulator.request({
      method: 'POST',
      path: '/__emulator/bonuses',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ giver_id: 'usr_003', receiver_ids: ['usr_004'], hashtag: HASHTAG, amount: 10, reason }),
    });
    await response.body.dump();
    if (response.statusCode !== 201) throw new Error(`the emulator refused to give a bonus: ${response.statusCode}`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([delivered, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    pending.delete(reason);
    return { latenciesMs: entry.latenciesMs, lost: entry.remaining };
  }

  const results: SubscriptionResult[] = [];
  try {
    for (const subscribers of settings.subscriberCounts) {
      const clients: Client[] = Array.from({ length: subscribers }, () =>
        createClient({ url: graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: false }),
      );
      const failures: unknown[] = [];
      for (const client of clients) {
        client.subscribe<{ bonusCreated: { bonus: { reason: string } } }>(
          { query: SUBSCRIPTION, variables: { tag: HASHTAG } },
          { next: (result) => deliver(result.data?.bonusCreated.bonus.reason), error: (error) => failures.push(error), complete: () => undefined },
        );
      }
      try {
        // Subscriptions go live asynchronously (gateway, then its upstream stream): give bonuses until one reaches everybody.
        for (let attempt = 0; (await event(subscribers, WARMUP_TIMEOUT_MS)).lost > 0; attempt += 1) {
          if (failures.length || attempt >= 80) throw new Error(`${subscribers} subscribers never all received an event: ${String(failures[0] ?? 'timeout')}`);
        }
        const latenciesMs: number[] = [];
        let lost = 0;
        const [before, callsBefore] = await Promise.all([gatewayMetrics(), upstreamCalls()]);
        for (let index = 0; index < settings.events; index += 1) {
          const outcome = await event(subscribers);
          latenciesMs.push(...outcome.latenciesMs);
          lost += outcome.lost;
        }
        const [after, callsAfter] = await Promise.all([gatewayMetrics(), upstreamCalls()]);
        let delivered = 0;
        const started = performance.now();
        const deadline = started + settings.sustainedMs;
        await Promise.all(
          Array.from({ length: settings.window }, async () => {
            while (performance.now() < deadline) {
              const outcome = await event(subscribers);
              lost += outcome.lost;
              if (outcome.lost === 0) delivered += 1;
            }
          }),
        );
        const elapsedS = (performance.now() - started) / 1000;
        const sorted = latenciesMs.sort((a, b) => a - b);
        results.push({
          subscribers,
          events: settings.events,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          lost,
          eventsPerSec: delivered / elapsedS,
          deliveriesPerSec: (delivered * subscribers) / elapsedS,
          upstreamStreams: after.upstreams,
          executionsPerEvent: (after.executions - before.executions) / settings.events,
          upstreamCallsPerEvent: (callsAfter - callsBefore) / settings.events,
        });
      } finally {
        await Promise.all(clients.map((client) => client.dispose()));
      }
    }
  } finally {
    await emulator.close();
  }
  return results;
}
