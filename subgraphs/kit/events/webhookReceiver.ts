import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson, PayloadTooLargeError } from '../../../lib/http.ts';
import { nestsDeeperThan, valueNestsDeeperThan } from '../../../lib/jsonDepth.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { SubgraphRoute } from '../server.ts';
import type { EventLog, NewEvent } from './eventLog.ts';
import { secretMatches } from '../../../lib/secretMatches.ts';
import { withTraceContext } from '../../../lib/tracing.ts';
import { ErrorCode } from '../../../lib/errors.ts';
import { GraphQLError } from 'graphql';

/** What a delivery refused while the event log is unavailable asks of the service before it delivers again. */
const LOG_UNAVAILABLE_RETRY_SECONDS = 5;

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
  /**
   * Turns a delivery's decoded body into an event, or throws a `DeliveryRejected`. A field holding
   * JSON as text goes through `refuseDeepJson` before it is parsed.
   */
  parse(body: unknown): ParsedDelivery;
  /**
   * Decodes the body by its content type, or throws a `DeliveryRejected`; whatever it parses as JSON
   * goes through `refuseDeepJson` first. @default JSON only, whatever the content type says
   */
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

/**
 * Deepest nesting of objects and arrays accepted anywhere in a delivery: its body, whatever the
 * content type says, and JSON that a field carries as text. Real payloads nest a few levels.
 */
export const MAX_DELIVERY_DEPTH = 32;

const tooDeep = (what: string) => new DeliveryRejected(400, `${what} nests objects and arrays deeper than ${MAX_DELIVERY_DEPTH} levels`);

/**
 * Refuses JSON text nested deeper than `MAX_DELIVERY_DEPTH`, in one pass over it before anything
 * parses it: what walks the value afterwards (hashing, copying, `String()`) recurses and overflows
 * the stack at some depth, and the 5xx that follows would be redelivered for ever. `what` names the
 * text in the answer (`body`, or the field).
 */
export function refuseDeepJson(text: string | Uint8Array, what: string): void {
  if (nestsDeeperThan(typeof text === 'string' ? Buffer.from(text, 'utf8') : text, MAX_DELIVERY_DEPTH)) throw tooDeep(what);
}

/** A stable hash of a JSON value, keys sorted, for events whose upstream gives no id. */
export function contentHash(value: unknown): string {
  // Recursive, so bounded: a value deeper than any delivery may be is refused before the stack overflows.
  const canonical = (input: unknown, above: number): unknown => {
    if (!input || typeof input !== 'object') return input;
    if (above >= MAX_DELIVERY_DEPTH) throw tooDeep('body');
    return Array.isArray(input)
      ? input.map((item) => canonical(item, above + 1))
      : Object.fromEntries(Object.keys(input).sort().map((key) => [key, canonical((input as Record<string, unknown>)[key], above + 1)]));
  };
  return createHash('sha256').update(JSON.stringify(canonical(value, 0))).digest('hex').slice(0, 32);
}

/**
 * The receiving end of an upstream's webhook: authenticates the sender by the secret in the URL,
 * bounds the body, accepts unknown fields, refuses unknown event types, drops redeliveries, and
 * answers as soon as the event is in the log.
 */
export function createWebhookReceiver({ path, secret, log, maxBytes = 64 * 1024, parse, decode, logger }: WebhookReceiverOptions): SubgraphRoute[] {
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
    // Refused, not failed, from here on: a 5xx would make the service deliver the same body again and again.
    let body: unknown;
    try {
      if (decode) body = await decode(raw, String(req.headers['content-type'] ?? ''));
      else {
        // JSON whatever the content type says, so its depth is checked whatever it says.
        refuseDeepJson(raw, 'body');
        body = JSON.parse(raw.toString('utf8'));
      }
      // A decoder that forgot `refuseDeepJson` still hands on nothing deeper than a JSON body may be.
      if (valueNestsDeeperThan(body, MAX_DELIVERY_DEPTH)) throw tooDeep('body');
    } catch (error) {
      sendJson(res, error instanceof DeliveryRejected ? error.status : 400, { error: error instanceof DeliveryRejected ? error.message : 'body is not JSON' });
      return;
    }
    let event: NewEvent;
    try {
      const parsed = parse(body);
      event = { ...parsed, dedupeKey: parsed.dedupeKey ?? `${parsed.type}:${contentHash(body)}` };
    } catch (error) {
      if (error instanceof DeliveryRejected) {
        sendJson(res, error.status, { error: error.message });
        return;
      }
      throw error;
    }
    const trace = withTraceContext<Record<string, string>>({}).traceparent;
    let result: Awaited<ReturnType<EventLog['append']>>;
    try {
      result = await log.append({ ...event, ...(trace ? { trace } : {}) });
    } catch (error) {
      // The log's store is away (Redis down or silent): the service is told to deliver again shortly.
      if (!(error instanceof GraphQLError) || error.extensions.code !== ErrorCode.UpstreamUnavailable) throw error;
      logger?.warn({ type: event.type }, 'webhook not kept: the event log is unavailable; the service will deliver it again');
      sendJson(res, 503, { error: 'the event log is unavailable; deliver again later' }, { 'retry-after': String(LOG_UNAVAILABLE_RETRY_SECONDS) });
      return;
    }
    logger?.info({ type: event.type, duplicate: !result.appended }, 'webhook received');
    sendJson(res, result.appended ? 202 : 200, result.appended ? { accepted: true } : { accepted: true, duplicate: true });
  };
  return [
    { method: 'POST', path: `${prefix}*`, handler },
    // A POST without a secret segment is refused the same way.
    { method: 'POST', path: prefix.slice(0, -1), handler },
  ];
}
