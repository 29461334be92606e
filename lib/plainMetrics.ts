import type { Registry, RegistryContentType } from 'prom-client';

/**
 * A counter and a histogram for the per-request hot paths, counted into plain numbers and read by
 * prom-client's registry when `/metrics` is scraped, in prom-client's own format.
 *
 * prom-client validates and hashes an observation's labels on every `inc` and `observe`, even
 * through the child `labels()` returns: 2-3% of the gateway's and of a subgraph's CPU at
 * concurrency 32. Here a series is looked up by its label values once; counting it is an addition.
 */
type Labels<Name extends string> = Readonly<Record<Name, string>>;

interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
  /** prom-client's buckets carry one, null without exemplars. */
  exemplar?: null;
}

interface Exported {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: ExportedValue[];
  aggregator: 'sum';
}

/** What prom-client's registry reads of a metric (`registerMetric` takes any such object). */
interface Readable {
  /** The registry drops a counter's `_total` from it for OpenMetrics, and adds it to each sample. */
  name: string;
  readonly type: Exported['type'];
  get(): Promise<Exported>;
  getForPromString?(): Promise<Exported>;
  reset(): void;
}

abstract class PlainMetric<Name extends string, Series> implements Readable {
  abstract readonly type: Exported['type'];
  protected series = new Map<string, { labels: Labels<Name>; counted: Series }>();

  constructor(
    public name: string,
    readonly help: string,
    private readonly labelNames: readonly Name[],
    registry: Registry<RegistryContentType>,
  ) {
    (registry as unknown as { registerMetric(metric: Readable): void }).registerMetric(this);
  }

  protected seriesOf(labels: Labels<Name>): Series {
    const key = this.labelNames.map((name) => labels[name]).join('\u0000');
    let found = this.series.get(key);
    if (!found) {
      found = { labels: Object.fromEntries(this.labelNames.map((name) => [name, labels[name]])) as Labels<Name>, counted: this.create() };
      this.series.set(key, found);
    }
    return found.counted;
  }

  protected abstract create(): Series;
  /** Back to nothing counted, in place: a series a caller holds keeps counting into what is scraped. */
  protected abstract zero(counted: Series): void;
  /** Series counted at least once since they were made or reset: as prom-client, the others are not shown. */
  protected abstract counted(counted: Series): boolean;
  abstract get(): Promise<Exported>;

  protected shown(): Array<{ labels: Labels<Name>; counted: Series }> {
    return [...this.series.values()].filter(({ counted }) => this.counted(counted));
  }

  reset(): void {
    for (const { counted } of this.series.values()) this.zero(counted);
  }
}

export interface CounterSeries {
  inc(): void;
}

export class PlainCounter<Name extends string> extends PlainMetric<Name, { value: number } & CounterSeries> {
  readonly type = 'counter';

  /** The series of these label values: keep it, and count into it. */
  labels(labels: Labels<Name>): CounterSeries {
    return this.seriesOf(labels);
  }

  protected create() {
    return {
      value: 0,
      inc() {
        this.value += 1;
      },
    };
  }

  protected zero(counted: { value: number }) {
    counted.value = 0;
  }

  protected counted({ value }: { value: number }) {
    return value > 0;
  }

  async get(): Promise<Exported> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.shown().map(({ labels, counted }) => ({ labels: { ...labels }, value: counted.value })),
      aggregator: 'sum',
    };
  }
}

export interface HistogramSeries {
  observe(value: number): void;
}

interface CountedHistogram extends HistogramSeries {
  /** Observations per bucket, not cumulative; the last is above every bound. */
  buckets: number[];
  sum: number;
  count: number;
}

export class PlainHistogram<Name extends string> extends PlainMetric<Name, CountedHistogram> {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly Name[], private readonly bounds: readonly number[], registry: Registry<RegistryContentType>) {
    super(name, help, labelNames, registry);
  }

  labels(labels: Labels<Name>): HistogramSeries {
    return this.seriesOf(labels);
  }

  protected create(): CountedHistogram {
    const bounds = this.bounds;
    return {
      buckets: new Array<number>(bounds.length + 1).fill(0),
      sum: 0,
      count: 0,
      observe(value) {
        // As prom-client: a value that is no number would make every later scrape wrong.
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
        let index = 0;
        while (index < bounds.length && value > bounds[index]!) index += 1;
        this.buckets[index]! += 1;
        this.sum += value;
        this.count += 1;
      },
    };
  }

  protected zero(counted: CountedHistogram) {
    counted.buckets.fill(0);
    counted.sum = 0;
    counted.count = 0;
  }

  protected counted({ count }: CountedHistogram) {
    return count > 0;
  }

  /** As prom-client's histogram: cumulative buckets, `+Inf`, sum and count, the series' labels shared. */
  async getForPromString(): Promise<Exported> {
    const values: ExportedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, counted } of this.shown()) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += counted.buckets[index]!;
        values.push({ labels: { le: bound }, sharedLabels: labels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: labels, value: counted.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: labels, value: counted.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: labels, value: counted.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  async get(): Promise<Exported> {
    const exported = await this.getForPromString();
    exported.values = exported.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return exported;
  }
}
