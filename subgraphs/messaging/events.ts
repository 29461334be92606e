import { asRecord } from '../kit/envelopes.ts';
import { DeliveryRejected, contentHash, refuseDeepJson, type ParsedDelivery } from '../kit/events/webhookReceiver.ts';
import { serviceDateToIso } from './dates.ts';

/** Where the service posts a store's callbacks on this subgraph: `<path>/inbound/<secret>` and `<path>/status/<secret>`. */
export const CALLBACK_PATH = '/callbacks/messaging';
export const INBOUND_PATH = `${CALLBACK_PATH}/inbound`;
export const STATUS_PATH = `${CALLBACK_PATH}/status`;

/** A text that reached a store's short code. */
export interface InboundMessagePayload {
  type: 'message.inbound';
  storeId: string;
  /** Digits with the country code (the service sends a leading `+`). */
  from: string;
  body: string;
  messageId: string | null;
  keyword: string | null;
  keywordId: string | null;
  keywordType: string | null;
  subscriberStatus: string | null;
}

/** A status notification: an opt-in's or opt-out's outcome, including asynchronous refusals. */
export interface StatusNotificationPayload {
  type: 'message.status';
  storeId: string;
  succeeded: boolean;
  message: string | null;
  messageId: string | null;
  mobileId: string | null;
  subscriberStatus: string | null;
  reason: string | null;
}

export type MessagingEventPayload = InboundMessagePayload | StatusNotificationPayload;

/**
 * A field as text; an object or array is no text. `String()` of one would recurse through it, and
 * throw on a delivered object whose own `toString` is not a function: a 5xx, redelivered for ever.
 */
const text = (value: unknown): string | null => {
  const trimmed = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value).trim() : '';
  return trimmed === '' ? null : trimmed;
};
const digitsOf = (value: unknown): string | null => text(value)?.replace(/^\+/, '').replace(/\s/g, '') ?? null;
/** Field names in any case: `Details` arrives capitalised, the others in camel case. */
function lowerKeys(body: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(asRecord(body)).map(([name, value]) => [name.toLowerCase(), value]));
}

function detailsOf(value: unknown): Record<string, unknown> {
  if (value && typeof value === 'object') return lowerKeys(value);
  if (typeof value !== 'string' || !value.trim()) return {};
  // JSON inside text escapes the body's depth check (its brackets are inside a string): checked here, the same way.
  refuseDeepJson(value, 'Details');
  try {
    return lowerKeys(JSON.parse(value));
  } catch {
    // Details that are not JSON are kept out of the event, never a reason to refuse it.
    return {};
  }
}

/**
 * An inbound-message callback. The spec shows no payload; the live service posts multipart form
 * fields storeId, from (with a leading `+`), messageBody, messageId, keyword, keywordId,
 * keywordType, subscriberStatus and received (`MM/DD/YYYY HH:MM:SS`, GMT), many of them optional.
 */
export function parseInboundCallback(raw: unknown): ParsedDelivery {
  const body = lowerKeys(raw);
  const storeId = text(body.storeid);
  const from = digitsOf(body.from ?? body.mobileid ?? body.mobile);
  const message = text(body.messagebody ?? body.body ?? body.message) ?? '';
  if (!storeId || !from) throw new DeliveryRejected(400, 'an inbound callback needs storeId and from');
  const payload: InboundMessagePayload = {
    type: 'message.inbound',
    storeId,
    from,
    body: message,
    messageId: text(body.messageid ?? body.transactionid),
    keyword: text(body.keyword),
    keywordId: text(body.keywordid),
    keywordType: text(body.keywordtype),
    subscriberStatus: text(body.subscriberstatus),
  };
  const received = text(body.received);
  return {
    type: payload.type,
    // The message id is the service's own for this text: a redelivery carries the same one.
    dedupeKey: `${payload.type}:${payload.messageId ?? contentHash(raw)}`,
    occurredAt: (received && serviceDateToIso(received)) ?? new Date().toISOString(),
    payload,
  };
}

/** A message-status callback: status pass/fail, message, messageId, storeId, subscriberStatus, and `Details` as JSON text. */
export function parseStatusCallback(raw: unknown): ParsedDelivery {
  const body = lowerKeys(raw);
  const details = detailsOf(body.details);
  const storeId = text(body.storeid ?? details.storeid);
  const status = text(body.status)?.toLowerCase();
  if (!storeId || !status) throw new DeliveryRejected(400, 'a status callback needs storeId and status');
  const payload: StatusNotificationPayload = {
    type: 'message.status',
    storeId,
    succeeded: status === 'pass' || status === 'success' || status === 'delivered',
    message: text(body.message),
    messageId: text(body.messageid ?? body.transactionid ?? details.messageid),
    mobileId: digitsOf(body.mobileid ?? details.mobileid ?? details.mobile ?? details.to),
    subscriberStatus: text(body.subscriberstatus ?? details.subscriberstatus),
    reason: text(details.reason),
  };
  const created = text(details.created);
  return {
    type: payload.type,
    // One message may be reported more than once as it moves on (sent, then failed): each outcome is its own event.
    dedupeKey: payload.messageId ? `${payload.type}:${payload.messageId}:${status}:${payload.subscriberStatus ?? ''}` : `${payload.type}:${contentHash(raw)}`,
    occurredAt: (created && serviceDateToIso(created)) ?? new Date().toISOString(),
    payload,
  };
}
