/**
 * GraphQL enum names mapped to the values the REST service speaks. Passed to the schema as enum
 * resolvers, so resolvers see the service's values and clients see GraphQL names.
 */
export const SubscriberStatus = { OPTED_IN: 'Opted-In', OPTED_OUT: 'Opted-Out', PENDING: 'pending', LOCKED: 'locked' } as const;
export type SubscriberStatus = (typeof SubscriberStatus)[keyof typeof SubscriberStatus];

export const KeywordType = { OPT_IN: 'opt-in', RESPONDER: 'responder' } as const;
export type KeywordType = (typeof KeywordType)[keyof typeof KeywordType];

export const OptInType = { SINGLE: 'single', DOUBLE: 'double' } as const;
export type OptInType = (typeof OptInType)[keyof typeof OptInType];

export const Automation = { CONFIRMATION: 'confirmation', ALREADY_OPTED_IN: 'already' } as const;
export type Automation = (typeof Automation)[keyof typeof Automation];

const STATUSES = new Map<string, SubscriberStatus>(Object.values(SubscriberStatus).map((value) => [value.toLowerCase(), value]));

/** A status the schema does not know yet reads as null rather than failing the whole subscriber; case is not trusted. */
export function subscriberStatusOf(value: string | null | undefined): SubscriberStatus | null {
  return value ? (STATUSES.get(value.toLowerCase()) ?? null) : null;
}

export function keywordTypeOf(value: string | null | undefined): KeywordType | null {
  const lower = value?.toLowerCase();
  return lower === 'opt-in' || lower === 'responder' ? lower : null;
}
