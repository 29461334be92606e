import { badUserInput } from '../../kit/errors.ts';
import { intInRange, nonBlank } from '../../kit/validate.ts';
import { LIMITS, type TeamDto } from '../client.ts';
import type { UserStatus } from '../enums.ts';
import { optionalHashtag, optionalName } from '../validate.ts';
import type { Resolvers, TeamScope } from '../__generated__/resolvers.ts';

/**
 * The `scope` to send. A blank manager id names no team, yet sent as `scope=` the service reads it
 * as no scope: the whole company. A blank property name names no property either.
 */
function teamOf(team: TeamScope | null | undefined): TeamDto | undefined {
  if (!team) return undefined;
  const hasManager = team.managerId !== null && team.managerId !== undefined;
  const hasProperties = team.customProperties !== null && team.customProperties !== undefined;
  if (hasManager === hasProperties) throw badUserInput('team', 'give exactly one of managerId and customProperties');
  if (hasManager) return { managerId: nonBlank(team.managerId!, 'team.managerId') };
  if (team.customProperties!.length === 0) throw badUserInput('team.customProperties', 'must name at least one property');
  // A blank value stays allowed: a value to match, not a name.
  return { customProperties: Object.fromEntries(team.customProperties!.map(({ name, value }) => [nonBlank(name, 'team.customProperties.name'), value])) };
}

const STATUSES = new Set(['active', 'archived']);

export const analyticsResolvers: Resolvers = {
  Query: {
    hashtagTrends: (_parent, _args, { loaders }) => loaders.trends.load('all'),
    leaderboard: (_parent, { direction, hashtag, team, startDate, endDate }, { loaders }) => {
      if (startDate && endDate && startDate > endDate) throw badUserInput('startDate', 'must not be after endDate');
      return loaders.leaderboard.load({
        direction: direction ?? undefined,
        hashtag: optionalHashtag(hashtag, 'hashtag'),
        team: teamOf(team),
        startDate: startDate ?? undefined,
        endDate: endDate ?? undefined,
      });
    },
    standouts: (_parent, args, { loaders }) =>
      loaders.standouts.load({
        role: optionalName(args.role, 'role'),
        value: optionalName(args.value, 'value'),
        limit: intInRange(args.limit, 'limit', LIMITS.standouts.min, LIMITS.standouts.max),
        period: optionalName(args.period, 'period'),
        customPropertyName: optionalName(args.customPropertyName, 'customPropertyName'),
        // A value to match, like a team's property value: blank may be what is wanted.
        customPropertyValue: args.customPropertyValue ?? undefined,
      }),
  },
  User: {
    shortName: (user) => user.short_name ?? null,
    displayName: (user) => user.display_name ?? null,
    fullPicUrl: (user) => user.full_pic_url ?? null,
    profilePicUrl: (user) => user.profile_pic_url ?? null,
    firstName: (user) => user.first_name ?? null,
    lastName: (user) => user.last_name ?? null,
    lastActiveAt: (user) => user.last_active_at ?? null,
    externalUniqueId: (user) => user.external_unique_id ?? null,
    budgetBoost: (user) => user.budget_boost ?? null,
    userMode: (user) => user.user_mode ?? null,
    timeZone: (user) => user.time_zone ?? null,
    customProperties: (user) => user.custom_properties,
    canGive: (user) => user.can_give ?? null,
    canReceive: (user) => user.can_receive ?? null,
    earningBalance: (user) => user.earning_balance ?? null,
    lifetimeEarnings: (user) => user.lifetime_earnings ?? null,
    givingBalance: (user) => user.giving_balance ?? null,
    earningBalanceWithCurrency: (user) => user.earning_balance_with_currency ?? null,
    lifetimeEarningsWithCurrency: (user) => user.lifetime_earnings_with_currency ?? null,
    givingBalanceWithCurrency: (user) => user.giving_balance_with_currency ?? null,
    // A status the schema does not know yet reads as null rather than failing the user.
    status: (user) => (user.status && STATUSES.has(user.status) ? (user.status as UserStatus) : null),
  },
};
