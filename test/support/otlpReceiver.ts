import http from 'node:http';
import { listen, readBody, sendJson, PayloadTooLargeError, type Started } from '../../lib/http.ts';

/** One OTLP/HTTP JSON span as the exporter sends it (ids in hex). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
  events?: { name: string; attributes?: { key: string; value: Record<string, unknown> }[] }[];
  status?: { code?: number; message?: string };
  links?: { traceId: string; spanId: string }[];
  /** `service.name` of the resource the span came with. */
  service: string;
}

export interface OtlpReceiver extends Started {
  /** Every request that reached the receiver, whatever its path. */
  readonly requests: number;
  /** Every body received, as text: the whole of what left the processes, for searching. */
  readonly bodies: readonly string[];
  spans(): ReceivedSpan[];
}

/** What one export may weigh here; the exporter's batches (512 spans) stay far below it. */
const MAX_EXPORT_BYTES = 8 * 1024 * 1024;

type AnyValue = Record<string, unknown>;
type ExportRequest = {
  resourceSpans?: { resource?: { attributes?: { key: string; value: AnyValue }[] }; scopeSpans?: { spans?: Omit<ReceivedSpan, 'service'>[] }[] }[];
};

/** A span attribute's value, whichever OTLP type it came as. */
export function attributeOf(span: Pick<ReceivedSpan, 'attributes'>, key: string): unknown {
  const value = span.attributes?.find((attribute) => attribute.key === key)?.value;
  if (!value) return undefined;
  const [first] = Object.values(value);
  return typeof first === 'string' && 'intValue' in value ? Number(first) : first;
}

/** An OpenTelemetry collector's OTLP/HTTP traces endpoint, in process: `POST /v1/traces` with JSON. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let requests = 0;
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    requests += 1;
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      req.resume();
      return sendJson(res, 404, { message: 'not an OTLP traces endpoint' });
    }
    readBody(req, MAX_EXPORT_BYTES).then(
      (body) => {
        bodies.push(body.toString('utf8'));
        sendJson(res, 200, {});
      },
      (error: unknown) => sendJson(res, error instanceof PayloadTooLargeError ? 413 : 400, { message: 'refused' }),
    );
  });
  const started = await listen(server, 0, '127.0.0.1');
  return {
    ...started,
    get requests() {
      return requests;
    },
    bodies,
    spans() {
      return bodies.flatMap((body) =>
        ((JSON.parse(body) as ExportRequest).resourceSpans ?? []).flatMap((resourceSpans) => {
          const service = String(resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '');
          return (resourceSpans.scopeSpans ?? []).flatMap((scope) => (scope.spans ?? []).map((span) => ({ ...span, service })));
        }),
      );
    },
  };
}
