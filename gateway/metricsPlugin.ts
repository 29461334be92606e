import { Counter, Gauge, type Registry } from 'prom-client';
import { PlainCounter, PlainHistogram, type CounterSeries, type HistogramSeries } from '../lib/plainMetrics.ts';
import type { SubscriptionExecutor } from './subscriptions/executor.ts';
import type { SharedPayloads } from './subscriptions/sharedPayloads.ts';
import type { MicroCache } from './microCache.ts';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';

/** Operation counts and durations by operation type and outcome; no name or variable ever becomes a label. */
export interface OperationMetrics {
  /** `passedThrough`: served by the pass-through, without Apollo Server. */
  observe(type: string, ok: boolean, seconds: number, passedThrough?: boolean): void;
}

export function createOperationMetrics(registry: Registry): OperationMetrics {
  // Counted into plain numbers, read when scraped: these count every operation.
  const operations = new PlainCounter('gateway_operations_total', 'GraphQL operations handled, by type and outcome', ['type', 'outcome'] as const, registry);
  const seconds = new PlainHistogram('gateway_operation_seconds', 'GraphQL operation duration at the gateway', ['type'] as const, [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registry);
  const passedThrough = new PlainCounter(
    'gateway_operations_passed_through_total',
    'Of those, operations one subgraph answered whole, passed to the client as they came, without Apollo Server',
    ['type'] as const,
    registry,
  );
  // Each labelled series is looked up once per type and outcome. The types are GraphQL's three (and
  // `unknown`), so the map stays small.
  const series = new Map<string, { operations: CounterSeries; seconds: HistogramSeries; passedThrough?: CounterSeries }>();
  const seriesOf = (type: string, outcome: 'ok' | 'error') => {
    const key = `${type}\u0000${outcome}`;
    let found = series.get(key);
    if (!found) series.set(key, (found = { operations: operations.labels({ type, outcome }), seconds: seconds.labels({ type }) }));
    return found;
  };
  return {
    observe(type, ok, duration, passed = false) {
      const found = seriesOf(type, ok ? 'ok' : 'error');
      found.operations.inc();
      found.seconds.observe(duration);
      if (passed) (found.passedThrough ??= passedThrough.labels({ type })).inc();
    },
  };
}

/** The operations Apollo Server runs, counted in the gateway's operation metrics. */
export function metricsPlugin<Context extends BaseContext>(metrics: OperationMetrics): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ operation, errors }) {
          metrics.observe(operation?.operation ?? 'unknown', !errors?.length, (performance.now() - started) / 1000);
        },
      };
    },
  };
}

/**
 * Subscription economy: upstream streams and plan executions stay flat as identical subscribers
 * are added; only `subscribers` grows.
 */
export function subscriptionMetrics(registry: Registry, executor: SubscriptionExecutor, payloads?: Pick<SharedPayloads, 'serializations' | 'framesWritten'>): void {
  const read = (pick: (stats: ReturnType<SubscriptionExecutor['stats']>) => number) =>
    function (this: Gauge) {
      this.set(pick(executor.stats()));
    };
  new Gauge({ name: 'gateway_subscription_subscribers', help: 'Client subscriptions open', registers: [registry], collect: read((stats) => stats.subscribers) });
  new Gauge({ name: 'gateway_subscription_upstreams', help: 'Distinct subscription streams open to subgraphs (shared by identical subscribers)', registers: [registry], collect: read((stats) => stats.upstreams) });
  new Counter({
    name: 'gateway_subscription_executions_total',
    help: 'Query plans run for subscription events: one per event per upstream stream',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(executor.stats().executions);
    },
  });
  if (!payloads) return;
  new Counter({
    name: 'gateway_stream_payloads_serialized_total',
    help: 'Results serialised for graphql-ws and SSE clients: one per subscription event per group of identical subscribers',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(payloads.serializations);
    },
  });
  new Counter({
    name: 'gateway_stream_frames_written_total',
    help: "graphql-ws next frames written straight to a subscriber's socket around a shared payload (the rest go through graphql-ws's own loop)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(payloads.framesWritten);
    },
  });
}

/** A counter read, when scraped, from a running total kept elsewhere. */
function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** Subgraph requests that joined an identical one in flight instead of being sent. */
export function sharedReadMetrics(registry: Registry, dataSources: ReadonlyMap<string, { shared: number }>): void {
  totalCounter(registry, 'gateway_subgraph_requests_shared_total', 'Subgraph reads not sent because an identical one (same operation, variables and credentials) was in flight', () => {
    let shared = 0;
    for (const source of dataSources.values()) shared += source.shared;
    return shared;
  });
}

/** Reads of one credential sent to a subgraph together (gateway/readBatches.ts). */
export function batchedReadMetrics(registry: Registry, batchers: () => Iterable<{ batches: number; batchedReads: number }>): void {
  const sum = (read: (batcher: { batches: number; batchedReads: number }) => number) => () => {
    let total = 0;
    for (const batcher of batchers()) total += read(batcher);
    return total;
  };
  totalCounter(registry, 'gateway_subgraph_read_batches_total', 'Subgraph requests that carried several reads of one credential', sum((batcher) => batcher.batches));
  totalCounter(registry, 'gateway_subgraph_reads_batched_total', 'Subgraph reads sent inside a batch', sum((batcher) => batcher.batchedReads));
}

/** The micro-cache of opted-in reads: hits made no subgraph request; misses did (or joined one in flight). */
export function microCacheMetrics(registry: Registry, cache: Pick<MicroCache, 'hits' | 'misses' | 'entries' | 'bytes'>): void {
  totalCounter(registry, 'gateway_micro_cache_hits_total', 'Subgraph reads of opted-in root fields answered from the micro-cache', () => cache.hits);
  totalCounter(registry, 'gateway_micro_cache_misses_total', 'Subgraph reads of opted-in root fields not in the micro-cache (or expired)', () => cache.misses);
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge('gateway_micro_cache_entries', 'Answers the micro-cache holds', () => cache.entries);
  gauge('gateway_micro_cache_bytes', 'Bytes of answers the micro-cache holds', () => cache.bytes);
}
