import { nonBlank } from '../../kit/validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

export const apiKeyResolvers: Resolvers = {
  Query: {
    apiKeys: (_parent, { userId }, { client }) => client.listApiKeys({ userId: userId ?? undefined }),
  },
  Mutation: {
    createApiKey: (_parent, { input }, { client }) =>
      client.createApiKey({ label: nonBlank(input.label, 'input.label'), readOnly: input.readOnly ?? false, userId: input.userId ?? undefined }),
    deleteApiKey: async (_parent, { id }, { client }) => ({ id, ...(await client.deleteApiKey(id)) }),
  },
};
