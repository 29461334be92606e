import { asArray, asRecord, toNumber } from '../kit/envelopes.ts';
import { DeliveryRejected, contentHash, type ParsedDelivery } from '../kit/events/webhookReceiver.ts';
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

const text = (value: unknown): string | null => (value === undefined || value === null || value === '' ? null : String(value));

function toBonus(raw: Record<string, unknown>): BonusDto {
  const hashtag = text(raw.hashtag ?? raw.value);
  return {
    id: text(raw.id) ?? `h_${contentHash(raw)}`,
    created_at: text(raw.created_at),
    reason: text(raw.reason),
    amount: toNumber(raw.amount) ?? null,
    amount_with_currency: text(raw.amount_with_currency),
    hashtag: hashtag && !hashtag.startsWith('#') ? `#${hashtag}` : hashtag,
    giver: raw.giver ? toUser(raw.giver) : null,
    receivers: asArray(raw.receivers).map(toUser),
  };
}

function toAchievement(raw: Record<string, unknown>): AchievementDto {
  return {
    id: text(raw.id) ?? `h_${contentHash(raw)}`,
    headline: text(raw.headline),
    title: text(raw.title),
    importance: toNumber(raw.importance) ?? null,
    bonus_id: text(raw.bonus_id),
    receiver: raw.receiver ? toUser(raw.receiver) : null,
  };
}

/**
 * One webhook delivery as the recognition service sends it. The spec shows no payload, so this
 * accepts the shapes such services use: the type under `type`, `event_type` or `event`; the
 * entity under `data` (bare or wrapped as `data.bonus`), or at the top as `bonus`/`achievement`.
 */
export function parseRecognitionDelivery(body: unknown): ParsedDelivery {
  const envelope = asRecord(body);
  const type = String(envelope.type ?? envelope.event_type ?? envelope.event ?? '') as WebhookEventTypeDto | '';
  const data = asRecord(envelope.data);
  if (type === 'bonus.created') {
    const bonus = toBonus(asRecord(data.bonus ?? envelope.bonus ?? (Object.keys(data).length ? data : undefined)));
    return {
      type,
      // The bonus id is the upstream's own id for this event: a redelivery carries the same one.
      dedupeKey: `${type}:${bonus.id}`,
      occurredAt: bonus.created_at ?? text(envelope.created_at) ?? new Date().toISOString(),
      payload: { type, bonus } satisfies RecognitionEventPayload,
      entities: [{ kind: 'Bonus', id: bonus.id, value: bonus }],
    };
  }
  if (type === 'achievement_event.created') {
    const achievement = toAchievement(asRecord(data.achievement ?? envelope.achievement ?? (Object.keys(data).length ? data : undefined)));
    return {
      type,
      dedupeKey: `${type}:${achievement.id}`,
      occurredAt: text(data.created_at ?? envelope.created_at) ?? new Date().toISOString(),
      payload: { type, achievement } satisfies RecognitionEventPayload,
      entities: [{ kind: 'Achievement', id: achievement.id, value: achievement }],
    };
  }
  throw new DeliveryRejected(400, type ? `unknown event type ${JSON.stringify(type).slice(0, 80)}` : 'the delivery names no event type');
}
