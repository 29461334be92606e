import { readInt, type Env } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import type { ServiceEntry } from '../../lib/services.ts';
import { createMetrics, observeUpstream, type Metrics } from '../../lib/metrics.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import { createRestTransport, DEFAULT_MAX_DOWNLOAD_BYTES, DEFAULT_MAX_RESPONSE_BYTES, type RestTransport } from './transport.ts';
import { SYSTEM_CLOCK } from '../../lib/deadlines.ts';
import { createUpstreamPacer, type PacingSettings } from './pacing.ts';
import { createSharedUpstreamPacer } from './sharedPacing.ts';
import type { CircuitBreakerSettings } from '../../lib/circuitBreaker.ts';
import { createBreakerGuards } from '../../lib/circuitBreakerGuards.ts';
import { withCircuitBreaker } from './upstreamBreaker.ts';
import { createUpstreamSpans } from './tracing.ts';

/** How much of one answer a subgraph reads from its service. */
export interface UpstreamLimits {
  /** The longest answer body buffered; longer is `UPSTREAM_ERROR`. */
  maxResponseBytes: number;
  /** The longest file streamed through, for a service with downloads. @default 100 MiB */
  maxDownloadBytes?: number;
}

/** `<NAME>_MAX_RESPONSE_BYTES`, read alike for every service. */
export function readUpstreamLimits(env: Env, service: ServiceEntry): UpstreamLimits {
  return { maxResponseBytes: readInt(env, service.env.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, { min: 1024, max: 256 * 1024 * 1024 }) };
}

/** A download cap setting (`MARKETPLACE_MAX_DOWNLOAD_BYTES`): files are streamed, so it may be far above the body cap. */
export function readDownloadLimit(env: Env, name: string): number {
  return readInt(env, name, DEFAULT_MAX_DOWNLOAD_BYTES, { min: 1024, max: 4 * 1024 * 1024 * 1024 });
}

export interface ServiceUpstreamOptions extends Partial<UpstreamLimits> {
  service: string;
  baseUrl: string;
  timeoutMs: number;
  logger: Logger;
  /** Pacing under the service's published rates (`lib/upstreamRates.ts`), for a service that publishes any. */
  pacing?: PacingSettings;
  /** With it, the pacing slots live in Redis, shared by every replica (`subgraphs/kit/sharedPacing.ts`). */
  redisUrl?: string | undefined;
  /** The service's circuit breaker (CIRCUIT_BREAKER_*); none when absent or its threshold is 0. */
  circuitBreaker?: CircuitBreakerSettings;
}

/**
 * A subgraph's metrics registry and its upstream transport, every call counted and timed into it,
 * behind the service's circuit breaker.
 */
export function createServiceUpstream({ service, baseUrl, timeoutMs, logger, maxResponseBytes, maxDownloadBytes, pacing, circuitBreaker, redisUrl }: ServiceUpstreamOptions): { metrics: Metrics; transport: RestTransport } {
  const metrics = createMetrics(service);
  const rates = PUBLISHED_RATES[service];
  // Undefined when traces are off: the transport is then used as it is.
  const spans = createUpstreamSpans(service, baseUrl);
  const observe = observeUpstream(metrics, service);
  const pacerOptions = pacing?.enabled && rates ? { service, rates, settings: pacing, clock: SYSTEM_CLOCK, registry: metrics.registry } : undefined;
  const shared = pacerOptions && redisUrl ? createSharedUpstreamPacer({ ...pacerOptions, redisUrl, logger }) : undefined;
  const pace = shared?.pace ?? (pacerOptions ? createUpstreamPacer(pacerOptions) : undefined);
  const transport = createRestTransport({
    service,
    baseUrl,
    timeoutMs,
    logger,
    observe: spans ? spans.observing(observe) : observe,
    ...(pace ? { pace } : {}),
    ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
    ...(maxDownloadBytes !== undefined ? { maxDownloadBytes } : {}),
  });
  if (shared) {
    const closeTransport = transport.close.bind(transport);
    transport.close = async () => {
      await closeTransport();
      await shared.close();
    };
  }
  const guard = circuitBreaker && createBreakerGuards({ settings: circuitBreaker, logger, registry: metrics.registry, prefix: service })(service);
  const guarded = withCircuitBreaker(transport, guard);
  // Outside the breaker: a call it refuses is a span too, failed fast with UPSTREAM_UNAVAILABLE.
  return { metrics, transport: spans ? spans.wrap(guarded) : guarded };
}
