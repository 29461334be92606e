import { runLoad } from './load.ts';
import type { ReferenceOperation } from './operations.ts';
import type { EmulatorControl } from './stack.ts';
import { summarize, type Summary } from './stats.ts';

/**
 * Many dashboards asking the same thing at once: `concurrency` clients send one operation, with one
 * credential, back to back through the graph. Identical subgraph reads in flight together are made
 * once (gateway/inFlight.ts), so the upstream calls per request fall below the operation's own.
 */
export interface IdenticalReadsResult {
  operation: string;
  emulatorLatencyMs: number;
  concurrency: number;
  gateway: Summary;
  /** REST calls read from the emulators' request logs over the timed stretch, per request served. */
  upstreamCallsPerRequest: number;
  /** What one request alone costs: one call per distinct resource. */
  minUpstreamCalls: number;
}

export interface IdenticalReadsSettings {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  emulatorLatencyMs: number;
}

export async function measureIdenticalReads(operation: ReferenceOperation, gateway: () => Promise<unknown>, emulators: readonly EmulatorControl[], settings: IdenticalReadsSettings): Promise<IdenticalReadsResult> {
  await runLoad(gateway, { concurrency: settings.concurrency, durationMs: settings.warmupMs });
  await Promise.all(emulators.map((emulator) => emulator.clearRequests()));
  const sample = await runLoad(gateway, { concurrency: settings.concurrency, durationMs: settings.durationMs });
  const calls = (await Promise.all(emulators.map((emulator) => emulator.callCount()))).reduce((sum, count) => sum + count, 0);
  if (sample.firstError) console.error(`  identical ${operation.name}: ${sample.firstError}`);
  const summary = summarize(sample.latenciesMs, sample.elapsedMs, sample.errors);
  return {
    operation: operation.name,
    emulatorLatencyMs: settings.emulatorLatencyMs,
    concurrency: settings.concurrency,
    gateway: summary,
    upstreamCallsPerRequest: calls / summary.n,
    minUpstreamCalls: operation.minUpstreamCalls,
  };
}
