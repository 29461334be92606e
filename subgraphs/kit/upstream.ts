import { readInt, type Env } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import type { ServiceEntry } from '../../lib/services.ts';
import { createConnectionGateMetrics, createMetrics, observeUpstream, type Metrics } from '../../lib/metrics.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import { createRestTransport, DEFAULT_CONNECTIONS, DEFAULT_MAX_DOWNLOAD_BYTES, DEFAULT_MAX_RESPONSE_BYTES, type RestTransport } from './transport.ts';
import { SYSTEM_CLOCK } from '../../lib/deadlines.ts';
import { createUpstreamPacer, type PacingSettings } from './pacing.ts';
import { createSharedUpstreamPacer } from './sharedPacing.ts';
import type { CircuitBreakerSettings } from '../../lib/circuitBreaker.ts';
import { createBreakerGuards } from '../../lib/circuitBreakerGuards.ts';
import { withCircuitBreaker } from './upstreamBreaker.ts';
import { createUpstreamSpans } from './tracing.ts';

/** How much of one answer a subgraph reads from its service, and how much of its connections one caller holds. */
export interface UpstreamLimits {
  /** The longest answer body buffered; longer is `UPSTREAM_ERROR`. */
  maxResponseBytes: number;
  /** The longest file streamed through, for a service with downloads. @default 100 MiB */
  maxDownloadBytes?: number;
  /** Connections one caller may hold at once. @default the transport's, 56 of its 64 */
  connectionsPerCaller?: number;
  /** Calls one caller may have waiting for a connection; past it, `RATE_LIMITED`. @default the transport's, 1024 */
  maxWaitingPerCaller?: number;
}

/** The most calls `<NAME>_MAX_WAITING_PER_CALLER` lets one caller queue: each holds its request's memory until it goes. */
const MAX_WAITING_PER_CALLER = 100_000;

/** A bounded whole number whose default is the transport's own: undefined when unset. */
function readIntIfSet(env: Env, name: string, range: { min: number; max: number }): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : readInt(env, name, range.min, range);
}

/** `<NAME>_MAX_RESPONSE_BYTES`, `<NAME>_CONNECTIONS_PER_CALLER` and `<NAME>_MAX_WAITING_PER_CALLER`, read alike for every service. */
export function readUpstreamLimits(env: Env, service: ServiceEntry): UpstreamLimits {
  const connectionsPerCaller = readIntIfSet(env, service.env.connectionsPerCaller, { min: 1, max: DEFAULT_CONNECTIONS });
  const maxWaitingPerCaller = readIntIfSet(env, service.env.maxWaitingPerCaller, { min: 0, max: MAX_WAITING_PER_CALLER });
  return {
    maxResponseBytes: readInt(env, service.env.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, { min: 1024, max: 256 * 1024 * 1024 }),
    ...(connectionsPerCaller !== undefined ? { connectionsPerCaller } : {}),
    ...(maxWaitingPerCaller !== undefined ? { maxWaitingPerCaller } : {}),
  };
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
export function createServiceUpstream({ service, baseUrl, timeoutMs, logger, maxResponseBytes, maxDownloadBytes, connectionsPerCaller, maxWaitingPerCaller, pacing, circuitBreaker, redisUrl }: ServiceUpstreamOptions): { metrics: Metrics; transport: RestTransport } {
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
    observeGate: createConnectionGateMetrics(metrics.registry, service),
    ...(pace ? { pace } : {}),
    ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
    ...(maxDownloadBytes !== undefined ? { maxDownloadBytes } : {}),
    ...(connectionsPerCaller !== undefined ? { connectionsPerCaller } : {}),
    ...(maxWaitingPerCaller !== undefined ? { maxWaitingPerCaller } : {}),
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
