import { GraphQLError } from 'graphql';
import { appliedButUnread, badUserInput, ErrorCode, graphError, upstreamContractError } from '../../kit/errors.ts';
import { downloadUrl } from '../../kit/downloads.ts';
import { nonBlank } from '../../kit/validate.ts';
import type { PlpDto, PlpOrderDto } from '../client.ts';
import type { MarketplaceContext } from '../context.ts';
import { write } from '../loaders.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/**
 * A label group as a mutation knows it: grouping answers only a message holding the new id, so
 * the rest is read from the seller's list, only when selected, and once per request until a write
 * changes it.
 */
export interface LabelGroupParent {
  id: string;
  expiration_date?: string | null;
  orders?: PlpOrderDto[];
  /** Grouped by this request: a failure to read it must not read as a failure to group. */
  created?: boolean;
}

const find = async (id: string, { loaders }: MarketplaceContext): Promise<PlpDto | null> => (await loaders.labelGroups.load('all')).find((plp) => plp.id === id) ?? null;

async function listed(parent: LabelGroupParent, context: MarketplaceContext): Promise<PlpDto> {
  if (!parent.created) {
    const found = await find(parent.id, context);
    if (!found) throw graphError(`marketplace: label group ${parent.id} is not in the seller's list`, { code: ErrorCode.NotFound, service: 'marketplace' });
    return found;
  }
  try {
    const found = await find(parent.id, context);
    // Not NOT_FOUND: the service has just answered that it made this group.
    if (!found) throw upstreamContractError('marketplace', "the seller's list of label groups does not hold it");
    return found;
  } catch (error) {
    // `orders` is non-null, so this error nulls the whole payload: it is where the new id survives,
    // and the orders are grouped now (grouping them again is refused).
    if (!(error instanceof GraphQLError)) throw error;
    throw appliedButUnread('marketplace', 'the service created the label group', parent.id, error, `read it with labelGroup(id: ${JSON.stringify(parent.id)}).`);
  }
}

export const labelGroupResolvers: Resolvers = {
  Query: {
    labelGroups: (_parent, _args, { loaders }) => loaders.labelGroups.load('all'),
    labelGroup: (_parent, { id }, context) => find(id, context),
  },
  Mutation: {
    groupOrders: async (_parent, { orderCodes }, { client, loaders }) => {
      if (orderCodes.length === 0) throw badUserInput('orderCodes', 'must name at least one order');
      orderCodes.forEach((code) => nonBlank(code, 'orderCodes'));
      const { id } = await write(loaders, 'labelGroups', () => client.groupOrders(orderCodes));
      return { id, created: true };
    },
    ungroupLabelGroup: async (_parent, { id }, { client, loaders }) => {
      nonBlank(id, 'id');
      return { id, ...(await write(loaders, 'labelGroups', () => client.ungroupLabelGroup(id))) };
    },
  },
  LabelGroup: {
    __resolveReference: (reference, context) => find(reference.id, context),
    expirationDate: async (plp, _args, context) => (plp.expiration_date !== undefined ? plp.expiration_date : (await listed(plp, context)).expiration_date),
    orders: async (plp, _args, context) => plp.orders ?? (await listed(plp, context)).orders,
    labels: (plp, _args, { loaders }) => loaders.labels.load(plp.id),
    labelsPdf: async (plp, _args, { downloads, credential, gatewayOrigin }) => {
      const { id, expiresAt } = await downloads.issue({ plpId: plp.id, credential });
      return { url: downloadUrl(gatewayOrigin, 'marketplace', id), expiresAt: new Date(expiresAt).toISOString() };
    },
  },
};
