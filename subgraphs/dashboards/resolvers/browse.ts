import type { Resolvers } from '../__generated__/resolvers.ts';

// Rounded to the schema's Int; a rate past 32 bits is the service's error at this field (lib/errorFormatting.ts).
const whole = (value: number | null) => (value === null ? null : Math.round(value));

export const browseResolvers: Resolvers = {
  Query: {
    dimensionValues: (_parent, { dimension, size, filters }, { client }) =>
      client.browseValues({ dimension, ...(size !== null && size !== undefined ? { size } : {}), ...(filters ? { filters } : {}) }),
    dimensionGroups: (_parent, _args, { loaders }) => loaders.dimensionGroups.load('all'),
    dashboardStats: (_parent, _args, { loaders }) => loaders.stats.load('all'),
  },
  DashboardStats: {
    averageRequestsPerSecond: (stats) => whole(stats.avgReqPerSec),
  },
};
