import { Counter, Histogram, type Registry } from 'prom-client';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';

/** Operation counts and durations by operation type and outcome; no name or variable ever becomes a label. */
export function metricsPlugin<Context extends BaseContext>(registry: Registry): ApolloServerPlugin<Context> {
  const operations = new Counter({
    name: 'gateway_operations_total',
    help: 'GraphQL operations handled, by type and outcome',
    labelNames: ['type', 'outcome'] as const,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'gateway_operation_seconds',
    help: 'GraphQL operation duration at the gateway',
    labelNames: ['type'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ operation, errors }) {
          const type = operation?.operation ?? 'unknown';
          operations.inc({ type, outcome: errors?.length ? 'error' : 'ok' });
          seconds.observe({ type }, (performance.now() - started) / 1000);
        },
      };
    },
  };
}
