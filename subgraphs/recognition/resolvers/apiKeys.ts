import { nonBlank } from '../../kit/validate.ts';
import type { RecognitionLoaders } from '../loaders.ts';
import { optionalName } from '../validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/** Runs a key write, then forgets the key lists read before it (even if it failed: it may have happened upstream). */
async function writing<T>(loaders: RecognitionLoaders, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    loaders.forgetApiKeys();
  }
}

export const apiKeyResolvers: Resolvers = {
  Query: {
    // A blank user id would be sent as `user_id=`, which the service reads as the caller's own keys.
    apiKeys: (_parent, { userId }, { loaders }) => loaders.apiKeys.load({ userId: optionalName(userId, 'userId') }),
  },
  Mutation: {
    createApiKey: (_parent, { input }, { client, loaders }) => {
      const label = nonBlank(input.label, 'input.label');
      const userId = optionalName(input.userId, 'input.userId');
      return writing(loaders, () => client.createApiKey({ label, readOnly: input.readOnly ?? false, userId }));
    },
    deleteApiKey: (_parent, { id }, { client, loaders }) => writing(loaders, async () => ({ id, ...(await client.deleteApiKey(id)) })),
  },
};
