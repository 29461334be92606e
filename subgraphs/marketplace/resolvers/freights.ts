import type { Resolvers } from '../__generated__/resolvers.ts';

export const freightResolvers: Resolvers = {
  Query: {
    freights: (_parent, _args, { client }) => client.listFreights(),
    statusTypes: (_parent, _args, { client }) => client.listStatusTypes(),
  },
};
