import type { Logger } from '../../lib/logger.ts';
import { createMetrics, observeUpstream, type Metrics } from '../../lib/metrics.ts';
import { createRestTransport, type RestTransport } from './transport.ts';

/** A subgraph's metrics registry and its upstream transport, every call counted and timed into it. */
export function createServiceUpstream({ service, baseUrl, timeoutMs, logger }: { service: string; baseUrl: string; timeoutMs: number; logger: Logger }): { metrics: Metrics; transport: RestTransport } {
  const metrics = createMetrics(service);
  const transport = createRestTransport({ service, baseUrl, timeoutMs, logger, observe: observeUpstream(metrics, service) });
  return { metrics, transport };
}
