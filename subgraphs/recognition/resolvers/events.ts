import { decodeCursor, encodeCursor } from '../../kit/cursors.ts';
import { followLog } from '../../kit/events/follow.ts';
import { resolveEvent } from '../../kit/events/eventTraces.ts';
import type { LoggedEvent } from '../../kit/events/eventLog.ts';
import type { AchievementDto, BonusDto, RecognitionEventPayload } from '../events.ts';
import type { AchievementFilter, BonusFilter, Resolvers } from '../__generated__/resolvers.ts';
import type { RecognitionContext } from '../context.ts';
import { optionalHashtag, optionalName } from '../validate.ts';

const CURSOR_KIND = 'recognition-events';

const positionOf = (after: string | null | undefined): string | undefined => (after ? String(decodeCursor<{ p: unknown }>(after, CURSOR_KIND, 'after').p) : undefined);
const payloadOf = (event: LoggedEvent) => event.payload as RecognitionEventPayload;
const sameTag = (a: string | null, b: string) => (a ?? '').replace(/^#/, '').toLowerCase() === b.replace(/^#/, '').toLowerCase();

// Checked before the subscription starts: a blank filter would match every event, not none.
function acceptsBonus(filter: BonusFilter | null | undefined) {
  optionalHashtag(filter?.hashtag, 'filter.hashtag');
  optionalName(filter?.giverId, 'filter.giverId');
  optionalName(filter?.receiverId, 'filter.receiverId');
  return (event: LoggedEvent): boolean => {
    const payload = payloadOf(event);
    if (payload.type !== 'bonus.created') return false;
    const { bonus } = payload;
    if (filter?.hashtag && !sameTag(bonus.hashtag, filter.hashtag)) return false;
    if (filter?.giverId && bonus.giver?.id !== filter.giverId) return false;
    if (filter?.receiverId && !bonus.receivers.some((receiver) => receiver.id === filter.receiverId)) return false;
    return true;
  };
}

function acceptsAchievement(filter: AchievementFilter | null | undefined) {
  optionalName(filter?.receiverId, 'filter.receiverId');
  return (event: LoggedEvent): boolean => {
    const payload = payloadOf(event);
    if (payload.type !== 'achievement_event.created') return false;
    const { achievement } = payload;
    if (filter?.receiverId && achievement.receiver?.id !== filter.receiverId) return false;
    if (filter?.minImportance !== null && filter?.minImportance !== undefined && (achievement.importance ?? 0) < filter.minImportance) return false;
    return true;
  };
}

const eventFields = {
  id: (event: LoggedEvent) => event.dedupeKey,
  occurredAt: (event: LoggedEvent) => event.occurredAt,
  cursor: (event: LoggedEvent) => encodeCursor(CURSOR_KIND, { p: event.position }),
};

/**
 * A subscription over the event log. The credential is checked before anything streams: a caller
 * the service refuses gets no events (the answer is remembered briefly, per credential). Events
 * come from webhooks, which never carry the subscriber's credential, so it is checked again while
 * the subscription streams: refused then, the stream ends with the refusal as its last result.
 */
function followEvents<Args extends { after?: string | null }>(accepts: (args: Args) => (event: LoggedEvent) => boolean) {
  return {
    subscribe: async (_parent: unknown, args: Args, context: RecognitionContext) => {
      const position = positionOf(args.after);
      const accepted = accepts(args);
      await context.verifyCredential();
      return followLog(context.events, position, accepted, { watch: (end) => context.watchCredential(end) });
    },
    resolve: resolveEvent,
  };
}

export const eventResolvers: Resolvers = {
  Subscription: {
    bonusCreated: followEvents(({ filter }: { filter?: BonusFilter | null; after?: string | null }) => acceptsBonus(filter)),
    achievementEarned: followEvents(({ filter }: { filter?: AchievementFilter | null; after?: string | null }) => acceptsAchievement(filter)),
  },
  BonusEvent: {
    ...eventFields,
    bonus: (event) => (payloadOf(event) as { bonus: BonusDto }).bonus,
  },
  AchievementEvent: {
    ...eventFields,
    achievement: (event) => (payloadOf(event) as { achievement: AchievementDto }).achievement,
  },
  Bonus: {
    __resolveReference: async (reference, { events }) => ((await events.findEntity('Bonus', reference.id)) as BonusDto | undefined) ?? null,
    createdAt: (bonus) => bonus.created_at,
    amountWithCurrency: (bonus) => bonus.amount_with_currency,
  },
  Achievement: {
    __resolveReference: async (reference, { events }) => ((await events.findEntity('Achievement', reference.id)) as AchievementDto | undefined) ?? null,
    bonus: async (achievement, _args, { events }) => (achievement.bonus_id ? (((await events.findEntity('Bonus', achievement.bonus_id)) as BonusDto | undefined) ?? null) : null),
  },
};
