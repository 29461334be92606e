import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGraphClient } from './clients.ts';
import { timeInRounds, type RoundSettings } from './measure.ts';
import type { ReferenceOperation } from './operations.ts';
import type { Child } from './processes.ts';
import type { Summary } from './stats.ts';

/** One operation through a gateway enforcing everything an operator turns on in production, beside one enforcing nothing. */
export interface EnforcementResult {
  operation: string;
  concurrency: number;
  /** No trusted documents, no rate limits, no traces; the operation's text in every request. */
  open: Summary;
  /** Trusted documents enforced (the request names the operation by id), both rate limits checked on every request, every span exported. */
  enforcing: Summary;
  /** Enforcing ops/s over open ops/s on the same run: the throughput kept with enforcement on. */
  throughputRatio: number;
  p50OverheadMs: number;
}

export interface EnforcementStack {
  open: Child;
  enforcing: Child;
  /** Span export requests the enforcing gateway made: tracing was really on. */
  exportsReceived(): number;
  stop(): Promise<void>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A stand-in OTLP/HTTP collector that takes every export and keeps nothing, so the gateway pays for tracing but nothing downstream is timed. */
async function startSpanSink(): Promise<{ url: string; received(): number; close(): Promise<void> }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      received += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Two more gateways over the same subgraphs, started alike: one open, one with trusted documents
 * enforced (a manifest of the reference operations), caller and address rate limits high enough
 * never to refuse but checked on every request, and OpenTelemetry traces exported.
 */
export async function launchEnforcement(launchGateway: (name: string, env: Record<string, string>) => Promise<Child>, operations: readonly ReferenceOperation[]): Promise<EnforcementStack> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-enforcement-'));
  const manifest = join(folder, 'persisted-query-manifest.json');
  writeFileSync(
    manifest,
    JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: operations.map((operation) => ({ id: sha256(operation.query), name: operation.name, type: 'query', body: operation.query })) }),
  );
  const sink = await startSpanSink();
  // Started side by side: each spends seconds loading its modules.
  const launched = await Promise.allSettled([
    launchGateway('gateway-open', {}),
    launchGateway('gateway-enforcing', {
      TRUSTED_DOCUMENTS: 'enforce',
      TRUSTED_DOCUMENTS_MANIFEST: manifest,
      RATE_LIMIT_CALLER_PER_SECOND: '1000000',
      RATE_LIMIT_ADDRESS_PER_SECOND: '1000000',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_SERVICE_NAME: 'gateway-enforcing',
      // Exported while it is timed, not only at exit.
      OTEL_BSP_SCHEDULE_DELAY: '500',
    }),
  ]);
  const started = launched.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = launched.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.all(started.map((child) => child.stop()));
    await sink.close();
    rmSync(folder, { recursive: true, force: true });
    throw failure.reason;
  }
  const [open, enforcing] = started as [Child, Child];
  return {
    open,
    enforcing,
    exportsReceived: sink.received,
    async stop() {
      await Promise.all([open.stop(), enforcing.stop()]);
      await sink.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The operation on both gateways in alternating rounds; the enforcing side sends only the operation's id, as a client built with the manifest does. */
export async function measureEnforcement(operation: ReferenceOperation, stack: EnforcementStack, headers: Record<string, string>, settings: RoundSettings): Promise<EnforcementResult> {
  const open = createGraphClient(stack.open.url, headers, settings.concurrency);
  const enforcing = createGraphClient(stack.enforcing.url, headers, settings.concurrency);
  const byText = JSON.stringify({ query: operation.query, variables: operation.variables });
  const byId = JSON.stringify({ documentId: sha256(operation.query), variables: operation.variables });
  try {
    const summaries = await timeInRounds(`enforcement ${operation.name}`, { open: () => open.execute(byText), enforcing: () => enforcing.execute(byId) }, ['open', 'enforcing'], settings);
    return {
      operation: operation.name,
      concurrency: settings.concurrency,
      open: summaries.open,
      enforcing: summaries.enforcing,
      throughputRatio: summaries.enforcing.opsPerSec / summaries.open.opsPerSec,
      p50OverheadMs: summaries.enforcing.p50Ms - summaries.open.p50Ms,
    };
  } finally {
    await Promise.all([open.close(), enforcing.close()]);
  }
}
