import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { PlainCounter, PlainHistogram } from '../../lib/plainMetrics.ts';

const BOUNDS = [0.005, 0.01, 0.25, 1];
// Values on the bounds, between them, past the last one, and zero; label values that need escaping.
const OBSERVED: Array<[string, number]> = [
  ['getReward', 0.005],
  ['getReward', 0.004],
  ['getReward', 0.3],
  ['list "all"\\n', 7],
  ['getReward', 0],
  ['list "all"\\n', 0.01],
];

/** The same counts through prom-client's own metrics and through the plain ones, in two registries. */
function both(openMetrics = false) {
  const registry = () => {
    const made = new Registry<RegistryContentType>();
    if (openMetrics) made.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    return made;
  };
  const own = registry();
  const plain = registry();
  const counter = new Counter({ name: 'x_calls_total', help: 'Calls', labelNames: ['service', 'operation'] as const, registers: [own] });
  const histogram = new Histogram({ name: 'x_seconds', help: 'Durations', labelNames: ['service', 'operation'] as const, buckets: BOUNDS, registers: [own] });
  const plainCounter = new PlainCounter('x_calls_total', 'Calls', ['service', 'operation'] as const, plain);
  const plainHistogram = new PlainHistogram('x_seconds', 'Durations', ['service', 'operation'] as const, BOUNDS, plain);
  for (const [operation, value] of OBSERVED) {
    counter.labels({ service: 'recognition', operation }).inc();
    histogram.labels({ service: 'recognition', operation }).observe(value);
    // The label values in another order: the series is named by its values, not by their order.
    plainCounter.labels({ operation, service: 'recognition' }).inc();
    plainHistogram.labels({ service: 'recognition', operation }).observe(value);
  }
  return { own, plain, plainHistogram };
}

describe('plain counters and histograms', () => {
  it('scrape as the same text as prom-client’s, in both exposition formats', async () => {
    const { own, plain } = both();
    const text = await own.metrics();
    expect(text).toContain('x_seconds_bucket{le="0.005",service="recognition",operation="getReward"} 3');
    expect(await plain.metrics()).toBe(text);
    const open = both(true);
    const openText = await open.own.metrics();
    expect(openText).toContain('x_calls_total{service="recognition",operation="getReward"} 4');
    expect(await open.plain.metrics()).toBe(openText);
  });

  it('read as the same JSON as prom-client’s, and reset as it does', async () => {
    const { own, plain } = both();
    expect(await plain.getMetricsAsJSON()).toEqual(await own.getMetricsAsJSON());
    own.resetMetrics();
    plain.resetMetrics();
    expect(await plain.metrics()).toBe(await own.metrics());
  });

  it('show a series once counted, and keep counting through a series held across a reset, as prom-client’s children do', async () => {
    const { own, plain } = both();
    const held = {
      own: (own.getSingleMetric('x_calls_total') as Counter<'service' | 'operation'>).labels({ service: 'recognition', operation: 'held' }),
      plain: (plain.getSingleMetric('x_calls_total') as unknown as PlainCounter<'service' | 'operation'>).labels({ service: 'recognition', operation: 'held' }),
      ownSeconds: (own.getSingleMetric('x_seconds') as Histogram<'service' | 'operation'>).labels({ service: 'recognition', operation: 'held' }),
      plainSeconds: (plain.getSingleMetric('x_seconds') as unknown as PlainHistogram<'service' | 'operation'>).labels({ service: 'recognition', operation: 'held' }),
    };
    // Held but not yet counted: no series.
    expect(await plain.metrics()).toBe(await own.metrics());
    expect(await plain.metrics()).not.toContain('operation="held"');
    own.resetMetrics();
    plain.resetMetrics();
    held.own.inc();
    held.plain.inc();
    held.ownSeconds.observe(0.02);
    held.plainSeconds.observe(0.02);
    expect(await plain.metrics()).toContain('x_calls_total{service="recognition",operation="held"} 1');
    expect(await plain.metrics()).toBe(await own.metrics());
  });

  it('refuse a value that is no number, as prom-client does, and count nothing of it', async () => {
    const { plain, plainHistogram } = both();
    const before = await plain.metrics();
    expect(() => plainHistogram.labels({ service: 'recognition', operation: 'getReward' }).observe(Number.NaN)).toThrow(TypeError);
    expect(await plain.metrics()).toBe(before);
  });
});
