import { badUserInput } from '../../kit/errors.ts';
import { pageNumberedConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { LIMITS } from '../client.ts';
import { write } from '../loaders.ts';
import { sku as skuArgument } from './products.ts';

export const fulfillmentResolvers: Resolvers = {
  Query: {
    // No total upstream: the kit reads a full last page as "maybe more".
    fulfillmentStock: (_parent, { recipientDocument, sku, first, after }, { loaders }) => {
      const skuFilter = sku === null || sku === undefined ? undefined : skuArgument(sku, 'sku');
      return pageNumberedConnection('marketplace-stock', { first, after }, {
        defaultSize: 20,
        maxSize: LIMITS.stockPerPage,
        firstPage: 1,
        fetchPage: async (page, perPage) => ({ items: await loaders.stockPages.load({ recipientDocument: recipientDocument ?? undefined, sku: skuFilter, page, perPage }) }),
      });
    },
    symbolicReturnInvoices: (_parent, { cdVatNumber, delivery, orderAccessKey }, { loaders }) => {
      if (!delivery && !orderAccessKey) throw badUserInput('delivery', 'give at least one of delivery and orderAccessKey');
      return loaders.symbolicReturns.load({ cdVatNumber: cdVatNumber ?? undefined, delivery: delivery ?? undefined, orderAccessKey: orderAccessKey ?? undefined });
    },
  },
  Mutation: {
    sendFulfillmentInvoice: async (_parent, { input }, { client, loaders }) => {
      const recipientDocument = nonBlank(input.recipientDocument, 'input.recipientDocument');
      if (!nonBlank(input.xml, 'input.xml').trimStart().startsWith('<')) throw badUserInput('input.xml', 'must be the invoice as XML text');
      await write(loaders, 'fulfillment', () => client.sendInvoice({ recipientDocument, xml: input.xml }));
      return { recipientDocument, accepted: true };
    },
  },
};
