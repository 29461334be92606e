import { pageNumberedConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import { PAGING, type WidgetDto } from '../client.ts';
import type { DashboardsContext } from '../context.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/** A dashboard's widgets as a connection; null when the dashboard does not exist. */
export async function widgetConnection(dashboard: string, args: { first?: number | null; after?: string | null }, { client }: DashboardsContext) {
  let missing = false;
  const connection = await pageNumberedConnection<WidgetDto>('dashboard-widgets', args, {
    ...PAGING,
    fetchPage: async (page, pageSize) => {
      const found = await client.listWidgets(dashboard, { page, pageSize });
      missing ||= !found;
      return found ?? { items: [] };
    },
  });
  return missing ? null : connection;
}

export const widgetResolvers: Resolvers = {
  Query: {
    widgets: (_parent, { dashboardId, first, after }, context) => widgetConnection(nonBlank(dashboardId, 'dashboardId'), { first, after }, context),
    widget: (_parent, { dashboardId, id }, { loaders }) => loaders.widget.load({ dashboard: nonBlank(dashboardId, 'dashboardId'), id: nonBlank(id, 'id') }),
  },
  Mutation: {
    createWidget: (_parent, { dashboardId, input }, { client }) => client.createWidget(nonBlank(dashboardId, 'dashboardId'), input),
  },
  Widget: {
    environment: (widget, _args, { loaders }) => (widget.environmentSlug ? loaders.environment.load(widget.environmentSlug) : null),
    dashboard: (widget, _args, { loaders }) => loaders.dashboard.load(widget.dashboardRef),
  },
};
