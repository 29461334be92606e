import { DateScalar, DateTimeScalar } from '../../../lib/scalars.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { analyticsResolvers } from './analytics.ts';
import { apiKeyResolvers } from './apiKeys.ts';
import { rewardResolvers } from './rewards.ts';
import { webhookResolvers } from './webhooks.ts';
import { eventResolvers } from './events.ts';
import { mergeResolvers } from '../../kit/mergeResolvers.ts';
import { LeaderboardDirection, UserStatus, WebhookEventType } from '../enums.ts';

export const resolvers: Resolvers = mergeResolvers<Resolvers>([
  { Date: DateScalar, DateTime: DateTimeScalar, WebhookEventType, LeaderboardDirection, UserStatus },
  analyticsResolvers,
  apiKeyResolvers,
  rewardResolvers,
  webhookResolvers,
  eventResolvers,
  {
    Query: {
      teapot: async (_parent, _args, { client }) => {
        await client.teapot();
        return null;
      },
    },
  },
]);
