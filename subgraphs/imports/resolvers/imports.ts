import type { GraphQLError } from 'graphql';
import { ErrorCode, graphError } from '../../kit/errors.ts';
import { httpUrl, maxLength, nonBlank } from '../../kit/validate.ts';
import { isFinal, type ImportDto } from '../client.ts';
import { knownStatus } from '../enums.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/**
 * The longest file location sent: it travels in the query string of the call, where servers commonly
 * stop at 8 KiB for the whole request line; the spec names no limit.
 */
export const MAX_FILE_LOCATION = 2048;

const notFound = (id: string) => graphError(`imports: no import ${id.slice(0, 100)} for this API key`, { code: ErrorCode.NotFound, service: 'imports' });

export const importResolvers: Resolvers = {
  Query: {
    import: (_parent, { id }, { loaders }) => loaders.import.load(nonBlank(id, 'id')),
  },
  Mutation: {
    createImport: async (_parent, { input }, { client, loaders }) => {
      const created = await client.createImport({
        apiId: nonBlank(input.apiId, 'input.apiId'),
        fileLocation: httpUrl(maxLength(input.fileLocation, 'input.fileLocation', MAX_FILE_LOCATION), 'input.fileLocation'),
        apiVersionId: input.apiVersionId === null || input.apiVersionId === undefined ? null : nonBlank(input.apiVersionId, 'input.apiVersionId'),
      });
      loaders.import.prime(created.id, created);
      return created;
    },
  },
  Subscription: {
    importStatusChanged: {
      // The subscriber's own key reads the job first: a key that may not see it gets no events.
      subscribe: async (_parent, { id }, { client, apikey, poller }) => {
        const current = await client.getImport(nonBlank(id, 'id'));
        if (!current) throw notFound(id);
        return poller.follow(id, apikey!, current);
      },
      resolve: (item: ImportDto | GraphQLError) => {
        if (item instanceof Error) throw item;
        return item;
      },
    },
  },
  Import: {
    __resolveReference: (reference, { loaders }) => loaders.import.load(reference.id),
    status: (dto) => knownStatus(dto.statusText),
    final: (dto) => isFinal(dto),
    messages: (dto) => (dto.message ?? '').split(/\r?\n/).map((line) => line.trim()).filter(Boolean),
  },
};
