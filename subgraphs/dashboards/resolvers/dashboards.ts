import { badUserInput } from '../../kit/errors.ts';
import { pageNumberedConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import { singleSegment } from '../../kit/paths.ts';
import { PAGING } from '../client.ts';
import { remember } from '../loaders.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { widgetConnection } from './widgets.ts';

/** The one of `id` and `slug` a lookup was given (checked as one path segment): the service finds a resource by either, in the same path. */
export function idOrSlug({ id, slug }: { id?: string | null; slug?: string | null }): string {
  const hasId = id !== null && id !== undefined;
  const hasSlug = slug !== null && slug !== undefined;
  if (hasId === hasSlug) throw badUserInput('id', 'give exactly one of id and slug');
  return hasId ? singleSegment(nonBlank(id!, 'id'), 'id') : singleSegment(nonBlank(slug!, 'slug'), 'slug');
}

export const dashboardResolvers: Resolvers = {
  Query: {
    dashboards: async (_parent, args, { client, loaders }) => {
      const connection = await pageNumberedConnection('dashboards', args, { ...PAGING, fetchPage: (page, pageSize) => client.listDashboards({ page, pageSize }) });
      // List items are whole dashboards: their widgets' `dashboard` needs no further call.
      for (const { node } of connection.edges) remember(loaders.dashboard, node);
      return connection;
    },
    dashboard: (_parent, args, { loaders }) => loaders.dashboard.load(idOrSlug(args)),
  },
  Mutation: {
    createDashboard: async (_parent, { input }, { client, loaders }) => remember(loaders.dashboard, await client.createDashboard({ name: input.name })),
    renameDashboard: async (_parent, { id, name }, { client, loaders }) => remember(loaders.dashboard, await client.renameDashboard(nonBlank(id, 'id'), name)),
  },
  Dashboard: {
    __resolveReference: (reference, { loaders }) => loaders.dashboard.load(reference.id),
    widgets: (dashboard, args, context) => widgetConnection(dashboard.id, args, context),
    widget: (dashboard, { id }, { loaders }) => loaders.widget.load({ dashboard: dashboard.id, id }),
  },
};
