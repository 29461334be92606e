import { upstreamContractError } from '../../kit/errors.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/**
 * The service's average, rounded to the schema's `Int`. Totals that can pass 32 bits are typed
 * `Float`; a rate of 2³¹ requests a second cannot be real, so it stays `Int` and a value beyond it
 * is the service's fault, named at this field rather than failing the answer with no path.
 */
function averageRate(value: number | null): number | null {
  if (value === null) return null;
  const rounded = Math.round(value);
  if (rounded >= -(2 ** 31) && rounded < 2 ** 31) return rounded;
  throw upstreamContractError('dashboards', `GET /stats answered avgReqPerSec ${value}, beyond what a 32-bit Int carries`, 200);
}

export const browseResolvers: Resolvers = {
  Query: {
    dimensionValues: (_parent, { dimension, size, filters }, { client }) =>
      client.browseValues({ dimension, ...(size !== null && size !== undefined ? { size } : {}), ...(filters ? { filters } : {}) }),
    dimensionGroups: (_parent, _args, { loaders }) => loaders.dimensionGroups.load('all'),
    dashboardStats: (_parent, _args, { loaders }) => loaders.stats.load('all'),
  },
  DashboardStats: {
    averageRequestsPerSecond: (stats) => averageRate(stats.avgReqPerSec),
  },
};
