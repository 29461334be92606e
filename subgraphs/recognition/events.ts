import { asArray, asRecord, toNumber } from '../kit/envelopes.ts';
import { DeliveryRejected, contentHash, type ParsedDelivery } from '../kit/events/webhookReceiver.ts';
import { instantOrNull } from '../../lib/scalars.ts';
import { toUser, type UserDto, type WebhookEventTypeDto } from './client.ts';

/** Where the recognition service POSTs its webhooks on this subgraph; the secret follows. */
export const WEBHOOK_PATH = '/webhooks/recognition';

export interface BonusDto {
  id: string;
  created_at: string | null;
  reason: string | null;
  amount: number | null;
  amount_with_currency: string | null;
  hashtag: string | null;
  giver: UserDto | null;
  receivers: UserDto[];
}

export interface AchievementDto {
  id: string;
  headline: string | null;
  title: string | null;
  importance: number | null;
  bonus_id: string | null;
  receiver: UserDto | null;
}

/** What the event log holds for one recognition event. */
export type RecognitionEventPayload = { type: 'bonus.created'; bonus: BonusDto } | { type: 'achievement_event.created'; achievement: AchievementDto };

/**
 * A field as text; an object or array is no text. `String()` of one would recurse through it, and
 * throw on a delivered object whose own `toString` is not a function: a 5xx, redelivered for ever.
 */
const text = (value: unknown): string | null => (typeof value === 'string' ? value || null : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null);
/** A number GraphQL's `Int` can carry (32-bit, whole), else null: kept for later, it must not fail a subscriber. */
const int32 = (value: unknown): number | null => {
  const number = toNumber(value);
  return number !== undefined && Number.isInteger(number) && number >= -(2 ** 31) && number < 2 ** 31 ? number : null;
};

/**
 * A user from a delivery, its instants and counts normalised: a delivery's fields are kept for
 * later, so one a scalar would refuse (`DateTime`, `Int`) is dropped now rather than failing every
 * subscriber later.
 */
/** A user as a delivery carries it; none where there is no object with an id (a user `"undefined"` would be a user nobody is). */
function deliveredUser(raw: unknown): UserDto | null {
  const record = asRecord(raw);
  if (text(record.id) === null) return null;
  // `toUser` makes text of every field it reads, so it gets only the fields that are not objects or arrays (see `text`).
  const user = toUser(Object.fromEntries(Object.entries(record).filter(([, value]) => value === null || typeof value !== 'object')));
  return {
    ...user,
    last_active_at: instantOrNull(user.last_active_at),
    budget_boost: int32(user.budget_boost),
    earning_balance: int32(user.earning_balance),
    lifetime_earnings: int32(user.lifetime_earnings),
    giving_balance: int32(user.giving_balance),
  };
}

function toBonus(raw: Record<string, unknown>): BonusDto {
  const hashtag = text(raw.hashtag ?? raw.value);
  return {
    id: text(raw.id) ?? `h_${contentHash(raw)}`,
    created_at: instantOrNull(raw.created_at),
    reason: text(raw.reason),
    amount: int32(raw.amount),
    amount_with_currency: text(raw.amount_with_currency),
    hashtag: hashtag && !hashtag.startsWith('#') ? `#${hashtag}` : hashtag,
    giver: deliveredUser(raw.giver),
    receivers: asArray(raw.receivers).flatMap((receiver) => deliveredUser(receiver) ?? []),
  };
}

function toAchievement(raw: Record<string, unknown>): AchievementDto {
  return {
    id: text(raw.id) ?? `h_${contentHash(raw)}`,
    headline: text(raw.headline),
    title: text(raw.title),
    importance: int32(raw.importance),
    bonus_id: text(raw.bonus_id),
    receiver: deliveredUser(raw.receiver),
  };
}

/**
 * One webhook delivery as the recognition service sends it. The spec shows no payload, so this
 * accepts the shapes such services use: the type under `type`, `event_type` or `event`; the
 * entity under `data` (bare or wrapped as `data.bonus`), or at the top as `bonus`/`achievement`.
 */
export function parseRecognitionDelivery(body: unknown): ParsedDelivery {
  const envelope = asRecord(body);
  const type = (text(envelope.type ?? envelope.event_type ?? envelope.event) ?? '') as WebhookEventTypeDto | '';
  const data = asRecord(envelope.data);
  if (type === 'bonus.created') {
    const bonus = toBonus(asRecord(data.bonus ?? envelope.bonus ?? (Object.keys(data).length ? data : undefined)));
    return {
      type,
      // The bonus id is the upstream's own id for this event: a redelivery carries the same one.
      dedupeKey: `${type}:${bonus.id}`,
      // An instant that cannot be read is replaced by the time of receipt: the event still arrives.
      occurredAt: bonus.created_at ?? instantOrNull(envelope.created_at) ?? new Date().toISOString(),
      payload: { type, bonus } satisfies RecognitionEventPayload,
      entities: [{ kind: 'Bonus', id: bonus.id, value: bonus }],
    };
  }
  if (type === 'achievement_event.created') {
    const achievement = toAchievement(asRecord(data.achievement ?? envelope.achievement ?? (Object.keys(data).length ? data : undefined)));
    return {
      type,
      dedupeKey: `${type}:${achievement.id}`,
      occurredAt: instantOrNull(data.created_at) ?? instantOrNull(envelope.created_at) ?? new Date().toISOString(),
      payload: { type, achievement } satisfies RecognitionEventPayload,
      entities: [{ kind: 'Achievement', id: achievement.id, value: achievement }],
    };
  }
  throw new DeliveryRejected(400, type ? `unknown event type ${JSON.stringify(type).slice(0, 80)}` : 'the delivery names no event type');
}
