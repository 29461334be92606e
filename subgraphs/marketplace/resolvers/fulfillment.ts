import { badUserInput } from '../../kit/errors.ts';
import { offsetConnection, offsetWindow, pagesCovering } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/** The service's `per_page` maximum. */
const MAX_PER_PAGE = 100;

export const fulfillmentResolvers: Resolvers = {
  Query: {
    fulfillmentStock: async (_parent, { recipientDocument, sku, first, after }, { client }) => {
      const window = offsetWindow('marketplace-stock', { first, after }, { defaultSize: 20, maxSize: MAX_PER_PAGE });
      // Pages of the window's own size: a client paging with a constant `first` costs one call per page.
      const perPage = window.limit;
      const pages = pagesCovering(window, perPage, 1);
      const fetched = await Promise.all(
        pages.map((page) => client.listStock({ recipientDocument: recipientDocument ?? undefined, sku: sku ?? undefined, page, perPage })),
      );
      const start = window.offset - (pages[0]! - 1) * perPage;
      const items = fetched.flat();
      // No total upstream: a full last page may be followed by more.
      const hasNextPage = items.length > start + window.limit || fetched.at(-1)!.length === perPage;
      return offsetConnection('marketplace-stock', items.slice(start, start + window.limit), { offset: window.offset, hasNextPage });
    },
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
  StockEntry: {
    recipientDocument: (entry) => entry.recipient_document,
    depositType: (entry) => entry.deposit_type,
    reservedStock: (entry) => entry.reserved_stock,
  },
  SymbolicReturnInvoice: {
    accessKey: (invoice) => invoice.access_key,
    issuedAt: (invoice) => invoice.issued_at,
    cdVatNumber: (invoice) => invoice.cd_vat_number,
    orderAccessKey: (invoice) => invoice.order_access_key,
  },
};
