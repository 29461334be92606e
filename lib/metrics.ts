import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { PlainCounter, PlainHistogram, type CounterSeries } from './plainMetrics.ts';

/** Per-process metrics; a registry per server so several servers can share a process in tests. */
export interface Metrics {
  registry: Registry;
  upstreamCalls: PlainCounter<'service' | 'operation' | 'status'>;
  upstreamSeconds: PlainHistogram<'service' | 'operation'>;
}

export function createMetrics(prefix: string, { defaults = false }: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry, prefix: `${prefix}_` });
  const upstreamCalls = new PlainCounter(
    `${prefix}_upstream_calls_total`,
    'Calls made to the upstream REST service, by operation and status (no credential ever appears in a label)',
    ['service', 'operation', 'status'] as const,
    registry,
  );
  const upstreamSeconds = new PlainHistogram(`${prefix}_upstream_seconds`, 'Upstream call duration', ['service', 'operation'] as const, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registry);
  return { registry, upstreamCalls, upstreamSeconds };
}

/**
 * The transport's `observe` hook, counting and timing each upstream call into these metrics. The
 * labelled series are looked up once per (operation, status), for each of the many calls a request
 * may make.
 */
export function observeUpstream(metrics: Metrics, service: string) {
  // By operation, then status: a key joined from both was a string built and hashed at every call.
  const series = new Map<string, Map<number | 'error', { calls: { inc(): void }; seconds: { observe(value: number): void } }>>();
  return ({ operation, status, durationMs }: { operation: string; status: number | 'error'; durationMs: number }): void => {
    let byStatus = series.get(operation);
    if (!byStatus) series.set(operation, (byStatus = new Map()));
    let entry = byStatus.get(status);
    if (!entry) {
      entry = { calls: metrics.upstreamCalls.labels({ service, operation, status: String(status) }), seconds: metrics.upstreamSeconds.labels({ service, operation }) };
      byStatus.set(status, entry);
    }
    entry.calls.inc();
    entry.seconds.observe(durationMs / 1000);
  };
}

/**
 * The metrics of a subgraph's connection gate (`subgraphs/kit/transport.ts`), labelled by service
 * only: the gate knows its callers by a key that must reach no metric. The counters are plain (a
 * burst counts one per waiting call); the gauge is read when `/metrics` is scraped.
 */
export function createConnectionGateMetrics(registry: Registry, service: string): { waited: CounterSeries; queueFull: CounterSeries; tooLate: CounterSeries; watchWaiting(count: () => number): void } {
  const counter = (name: string, help: string) => new PlainCounter(`${service}_upstream_connection_${name}_total`, help, ['service'] as const, registry).labels({ service });
  let waitingNow = () => 0;
  const waiting: Gauge<'service'> = new Gauge({
    name: `${service}_upstream_connection_waiting`,
    help: 'Upstream calls waiting now for a connection to the service',
    labelNames: ['service'] as const,
    registers: [registry],
    collect: () => waiting.set({ service }, waitingNow()),
  });
  return {
    waited: counter('waited', 'Upstream calls that waited for a connection: their caller held its share of the connections, or every connection was busy'),
    queueFull: counter('queue_full', 'Upstream calls refused with RATE_LIMITED before they were sent: their caller already had the most calls waiting for a connection'),
    tooLate: counter('too_late', 'Upstream calls refused with UPSTREAM_UNAVAILABLE before they were sent: less than half their deadline was left when a connection came free, or none came free in time'),
    watchWaiting(count) {
      waitingNow = count;
    },
  };
}
