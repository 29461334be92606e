import { DateTimeScalar } from '../../../lib/scalars.ts';
import { mergeResolvers } from '../../kit/mergeResolvers.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { Automation, KeywordType, OptInType, SubscriberStatus } from '../enums.ts';
import { eventResolvers } from './events.ts';
import { storeResolvers } from './stores.ts';
import { subscriberResolvers } from './subscribers.ts';

export const resolvers: Resolvers = mergeResolvers<Resolvers>([
  { DateTime: DateTimeScalar, SubscriberStatus, KeywordType, OptInType, Automation },
  storeResolvers,
  subscriberResolvers,
  eventResolvers,
]);
