import { badUserInput } from '../../kit/errors.ts';
import { pageNumberedConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { LIMITS } from '../client.ts';

export const fulfillmentResolvers: Resolvers = {
  Query: {
    // No total upstream: the kit reads a full last page as "maybe more".
    fulfillmentStock: (_parent, { recipientDocument, sku, first, after }, { client }) =>
      pageNumberedConnection('marketplace-stock', { first, after }, {
        defaultSize: 20,
        maxSize: LIMITS.stockPerPage,
        firstPage: 1,
        fetchPage: async (page, perPage) => ({ items: await client.listStock({ recipientDocument: recipientDocument ?? undefined, sku: sku ?? undefined, page, perPage }) }),
      }),
    symbolicReturnInvoices: (_parent, { cdVatNumber, delivery, orderAccessKey }, { client }) => {
      if (!delivery && !orderAccessKey) throw badUserInput('delivery', 'give at least one of delivery and orderAccessKey');
      return client.listSymbolicReturns({ cdVatNumber: cdVatNumber ?? undefined, delivery: delivery ?? undefined, orderAccessKey: orderAccessKey ?? undefined });
    },
  },
  Mutation: {
    sendFulfillmentInvoice: async (_parent, { input }, { client }) => {
      const recipientDocument = nonBlank(input.recipientDocument, 'input.recipientDocument');
      if (!nonBlank(input.xml, 'input.xml').trimStart().startsWith('<')) throw badUserInput('input.xml', 'must be the invoice as XML text');
      await client.sendInvoice({ recipientDocument, xml: input.xml });
      return { recipientDocument, accepted: true };
    },
  },
};
