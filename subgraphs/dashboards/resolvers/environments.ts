import { badUserInput } from '../../kit/errors.ts';
import { pageNumberedConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import { PAGING, type EnvironmentDto, type EnvironmentFilterDto, type EnvironmentInput } from '../client.ts';
import { remember, type DashboardsLoaders } from '../loaders.ts';
import type { EnvironmentFilterInput, Resolvers } from '../__generated__/resolvers.ts';
import { idOrSlug } from './dashboards.ts';

function environmentInput({ name, isDefault, filters }: { name?: string | null; isDefault?: boolean | null; filters?: readonly EnvironmentFilterInput[] | null }): EnvironmentInput {
  return { name, default: isDefault, filters: filters?.map(({ dimension, operator, value }): EnvironmentFilterDto => ({ dimension, operator, value })) };
}

/**
 * Caches a written environment for the rest of the request. The service keeps exactly one default,
 * so a write that makes one the default has unset whichever other environment this request cached
 * as the default: those are dropped, to be read again if asked.
 */
function rememberWritten(loader: DashboardsLoaders['environment'], environment: EnvironmentDto): EnvironmentDto {
  if (environment.isDefault) loader.clearAll();
  return remember(loader, environment);
}

export const environmentResolvers: Resolvers = {
  Query: {
    environments: (_parent, args, { client }) => pageNumberedConnection('environments', args, { ...PAGING, fetchPage: (page, pageSize) => client.listEnvironments({ page, pageSize }) }),
    environment: (_parent, args, { loaders }) => loaders.environment.load(idOrSlug(args)),
  },
  Mutation: {
    createEnvironment: async (_parent, { input }, { client, loaders }) => rememberWritten(loaders.environment, await client.createEnvironment({ ...environmentInput(input), name: input.name })),
    updateEnvironment: async (_parent, { id, input }, { client, loaders }) => {
      const changes = environmentInput(input);
      if (Object.values(changes).every((value) => value === null || value === undefined)) throw badUserInput('input', 'give at least one of name, isDefault and filters');
      return rememberWritten(loaders.environment, await client.updateEnvironment(nonBlank(id, 'id'), changes));
    },
  },
  Environment: {
    __resolveReference: (reference, { loaders }) => loaders.environment.load(reference.id),
    // The list shows environments without their filters: those are read from the environment itself, once.
    filters: async (environment, _args, { loaders }) => environment.filters ?? (await loaders.environment.load(environment.id))?.filters ?? [],
  },
};
