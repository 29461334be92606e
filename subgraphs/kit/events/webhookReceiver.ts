import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson, PayloadTooLargeError } from '../../../lib/http.ts';
import { nestsDeeperThan } from '../../../lib/jsonDepth.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { SubgraphRoute } from '../server.ts';
import type { EventLog, NewEvent } from './eventLog.ts';
import { secretMatches } from '../../../lib/secretMatches.ts';
import { withTraceContext } from '../../../lib/tracing.ts';

/** What a service's parser makes of one delivery; null when the event type is not one we know. */
export type ParsedDelivery = Omit<NewEvent, 'dedupeKey'> & { dedupeKey?: string };

export interface WebhookReceiverOptions {
  /** Path prefix; the secret is the last segment: `<path>/<secret>`. */
  path: string;
  /** The shared secret in the registered URL: upstreams here sign nothing. */
  secret: string;
  log: EventLog;
  /** @default 64 KiB */
  maxBytes?: number;
  /** Deepest nesting of objects and arrays accepted in a JSON delivery. @default 32 */
  maxDepth?: number;
  /** Turns a delivery's decoded body into an event, or throws a `DeliveryRejected`. */
  parse(body: unknown): ParsedDelivery;
  /** Decodes the body by its content type, or throws a `DeliveryRejected`. @default JSON only */
  decode?(raw: Buffer, contentType: string): unknown;
  logger?: Logger;
}

/** A delivery we refuse, with the status to answer. */
export class DeliveryRejected extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}


/** A stable hash of a JSON value, keys sorted, for events whose upstream gives no id. */
export function contentHash(value: unknown): string {
  const canonical = (input: unknown): unknown =>
    Array.isArray(input)
      ? input.map(canonical)
      : input && typeof input === 'object'
        ? Object.fromEntries(Object.keys(input).sort().map((key) => [key, canonical((input as Record<string, unknown>)[key])]))
        : input;
  return createHash('sha256').update(JSON.stringify(canonical(value))).digest('hex').slice(0, 32);
}

/**
 * The receiving end of an upstream's webhook: authenticates the sender by the secret in the URL,
 * bounds the body, accepts unknown fields, refuses unknown event types, drops redeliveries, and
 * answers as soon as the event is in the log.
 */
export function createWebhookReceiver({ path, secret, log, maxBytes = 64 * 1024, maxDepth = 32, parse, decode, logger }: WebhookReceiverOptions): SubgraphRoute[] {
  const prefix = `${path.replace(/\/+$/, '')}/`;
  const handler = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const given = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : '';
    if (!given || given.includes('/') || !secretMatches(given, secret)) {
      req.resume();
      sendJson(res, 401, { error: 'unknown webhook address' });
      return;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, maxBytes);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) {
        sendJson(res, 413, { error: `body exceeds ${maxBytes} bytes` }, { connection: 'close' });
        return;
      }
      throw error;
    }
    // Refused, not failed: a 5xx would make the service deliver the same body again and again.
    const json = !decode || String(req.headers['content-type'] ?? '').includes('json');
    if (json && nestsDeeperThan(raw, maxDepth)) {
      sendJson(res, 400, { error: `body nests objects and arrays deeper than ${maxDepth} levels` });
      return;
    }
    let body: unknown;
    try {
      body = decode ? await decode(raw, String(req.headers['content-type'] ?? '')) : JSON.parse(raw.toString('utf8'));
    } catch (error) {
      sendJson(res, error instanceof DeliveryRejected ? error.status : 400, { error: error instanceof DeliveryRejected ? error.message : 'body is not JSON' });
      return;
    }
    let parsed: ParsedDelivery;
    try {
      parsed = parse(body);
    } catch (error) {
      if (error instanceof DeliveryRejected) {
        sendJson(res, error.status, { error: error.message });
        return;
      }
      throw error;
    }
    const trace = withTraceContext<Record<string, string>>({}).traceparent;
    const result = await log.append({ ...parsed, dedupeKey: parsed.dedupeKey ?? `${parsed.type}:${contentHash(body)}`, ...(trace ? { trace } : {}) });
    logger?.info({ type: parsed.type, duplicate: !result.appended }, 'webhook received');
    sendJson(res, result.appended ? 202 : 200, result.appended ? { accepted: true } : { accepted: true, duplicate: true });
  };
  return [
    { method: 'POST', path: `${prefix}*`, handler },
    // A POST without a secret segment is refused the same way.
    { method: 'POST', path: prefix.slice(0, -1), handler },
  ];
}
