import { Registry, collectDefaultMetrics } from 'prom-client';
import { PlainCounter, PlainHistogram } from './plainMetrics.ts';

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
