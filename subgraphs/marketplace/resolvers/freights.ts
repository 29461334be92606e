import type { Resolvers } from '../__generated__/resolvers.ts';

export const freightResolvers: Resolvers = {
  Query: {
    freights: (_parent, _args, { loaders }) => loaders.freights.load('all'),
    statusTypes: (_parent, _args, { loaders }) => loaders.statusTypes.load('all'),
  },
};
