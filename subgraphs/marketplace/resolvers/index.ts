import { DateScalar, DateTimeScalar, JSONScalar } from '../../../lib/scalars.ts';
import { mergeResolvers } from '../../kit/mergeResolvers.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { QuestionStatus } from '../enums.ts';
import { freightResolvers } from './freights.ts';
import { fulfillmentResolvers } from './fulfillment.ts';
import { labelGroupResolvers } from './labelGroups.ts';
import { productResolvers } from './products.ts';
import { questionResolvers } from './questions.ts';
import { variationResolvers } from './variations.ts';

export const resolvers: Resolvers = mergeResolvers<Resolvers>([
  { Date: DateScalar, DateTime: DateTimeScalar, JSON: JSONScalar, QuestionStatus },
  labelGroupResolvers,
  questionResolvers,
  productResolvers,
  variationResolvers,
  fulfillmentResolvers,
  freightResolvers,
]);
