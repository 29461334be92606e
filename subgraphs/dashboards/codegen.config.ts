/** How codegen maps the dashboards schema onto the client's DTOs. Read by the root codegen.ts. */
export const dashboardsCodegen = {
  schema: 'schema/dashboards.graphql',
  output: 'subgraphs/dashboards/__generated__/resolvers.ts',
  contextType: '../context.ts#DashboardsContext',
  mappers: {
    Dashboard: '../client.ts#DashboardDto',
    Environment: '../client.ts#EnvironmentDto',
    EnvironmentFilter: '../client.ts#EnvironmentFilterDto',
    Widget: '../client.ts#WidgetDto',
    DimensionValues: '../client.ts#DimensionValuesDto',
    DimensionGroup: '../client.ts#DimensionGroupDto',
    Dimension: '../client.ts#DimensionDto',
    DashboardStats: '../client.ts#StatsDto',
  },
};
