import type { Resolvers } from '../__generated__/resolvers.ts';
import { mergeResolvers } from '../../kit/mergeResolvers.ts';
import { ImportStatus } from '../enums.ts';
import { importResolvers } from './imports.ts';

export const resolvers: Resolvers = mergeResolvers<Resolvers>([{ ImportStatus }, importResolvers]);
