/**
 * GraphQL enum names mapped to the values the REST service speaks. Passed to the schema as enum
 * resolvers, so resolvers see the service's values and clients see GraphQL names.
 */
export const WebhookEventType = { BONUS_CREATED: 'bonus.created', ACHIEVEMENT_EVENT_CREATED: 'achievement_event.created' } as const;
export type WebhookEventType = (typeof WebhookEventType)[keyof typeof WebhookEventType];

export const LeaderboardDirection = { RECEIVED: 'received', GIVEN: 'given' } as const;
export type LeaderboardDirection = (typeof LeaderboardDirection)[keyof typeof LeaderboardDirection];

export const UserStatus = { ACTIVE: 'active', ARCHIVED: 'archived' } as const;
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus];
