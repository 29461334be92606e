import { DateTimeScalar } from '../../../lib/scalars.ts';
import { mergeResolvers } from '../../kit/mergeResolvers.ts';
import { OAuthGrant } from '../client.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { administrationResolvers } from './administration.ts';
import { explorerSettingsResolvers } from './explorerSettings.ts';

export const resolvers: Resolvers = mergeResolvers<Resolvers>([{ DateTime: DateTimeScalar, OAuthGrant }, administrationResolvers, explorerSettingsResolvers]);
