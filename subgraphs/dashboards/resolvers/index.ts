import type { Resolvers } from '../__generated__/resolvers.ts';
import { mergeResolvers } from '../../kit/mergeResolvers.ts';
import { browseResolvers } from './browse.ts';
import { dashboardResolvers } from './dashboards.ts';
import { environmentResolvers } from './environments.ts';
import { widgetResolvers } from './widgets.ts';

export const resolvers: Resolvers = mergeResolvers<Resolvers>([dashboardResolvers, environmentResolvers, widgetResolvers, browseResolvers]);
