import { GraphQLError } from 'graphql';
import { WriteOutcome } from '../../../lib/errors.ts';
import { LIMITS, type ProductDto } from '../client.ts';
import { appliedButUnread, ErrorCode, upstreamContractError } from '../../kit/errors.ts';
import { forwardConnection } from '../../kit/connections.ts';
import { maxLength, nonBlank } from '../../kit/validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { write } from '../loaders.ts';

/** Leaves out what the caller did not give, rather than sending nulls. */
function withoutNulls<T extends object>(fields: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined)) as { [K in keyof T]: Exclude<T[K], null> };
}

/** A SKU argument: one longer than the marketplace accepts names nothing, so it is refused unsent. */
export const sku = (value: string, argument: string) => maxLength(nonBlank(value, argument), argument, LIMITS.skuLength);

/** An error of a write the service answered 2xx: one whose answer could not be read, as the transport or `parseAnswer` found. */
function answered(error: GraphQLError): boolean {
  const { code, status, writeOutcome } = error.extensions;
  return writeOutcome === WriteOutcome.Applied || (code === ErrorCode.UpstreamError && typeof status === 'number' && status >= 200 && status < 300);
}

export interface WriteThenRead<T> {
  /** The words before the id in the error: "the service created the product". */
  what: string;
  /** The SKU or id the write names, which the error carries as `resourceId`. */
  id: string;
  /** How the client reads it instead: `read it with product(sku: "X").` */
  follow: string;
  /** The write; null when the service's answer does not carry the resource. */
  write: () => Promise<T | null>;
  /** The resource read afresh (after `write`, which made the loaders forget it); null when the service has none. */
  read: () => Promise<T | null>;
}

/**
 * A write, then the resource it wrote: its answer, or a read of it when the answer does not carry
 * it. Once the service has answered 2xx the write is done, and a client told only "failed" would
 * send it again (a second product is CONFLICT, a second answer "already answered"): an answer that
 * cannot be read, a failed read-back, and one that finds nothing are each `appliedButUnread`, with
 * the id and the query that reads it. Errors of the write itself stand as they are.
 */
export async function writeThenRead<T>({ what, id, follow, write, read }: WriteThenRead<T>): Promise<T> {
  const applied = (cause: GraphQLError) => appliedButUnread('marketplace', what, id, cause, follow);
  let answer: T | null;
  try {
    answer = await write();
  } catch (error) {
    throw error instanceof GraphQLError && answered(error) ? applied(error) : error;
  }
  if (answer) return answer;
  try {
    const found = await read();
    // Not a silent null, nor NOT_FOUND: the service has just answered that it wrote it.
    if (!found) throw upstreamContractError('marketplace', 'it answered 404, as if there were none', 404);
    return found;
  } catch (error) {
    throw error instanceof GraphQLError ? applied(error) : error;
  }
}

export const productResolvers: Resolvers = {
  Query: {
    products: async (_parent, { status, first, after }, { loaders, cursors }) => {
      let totalCount: number | null = null;
      const connection = await forwardConnection<ProductDto>(
        'marketplace-products',
        { first, after },
        {
          defaultSize: 10,
          maxSize: 100,
          filters: { status: status ?? null },
          signer: cursors,
          idOf: (product) => product.sku,
          fetchPage: async (next) => {
            const page = await loaders.productPages.load(next ? { next, status: status ?? undefined } : { status: status ?? undefined });
            totalCount = page.total;
            // Questions or variations in the same request then reuse these products.
            for (const product of page.products) loaders.product.prime(product.sku, product);
            return { items: page.products, next: page.next };
          },
        },
      );
      return { ...connection, totalCount };
    },
    product: (_parent, args, { loaders }) => loaders.product.load(sku(args.sku, 'sku')),
  },
  Mutation: {
    createProduct: async (_parent, { input }, { client, loaders }) => {
      const productSku = sku(input.sku, 'input.sku');
      nonBlank(input.name, 'input.name');
      (input.variations ?? []).forEach((variation, index) => sku(variation.sku, `input.variations.${index}.sku`));
      const { promotionalPrice, variationAttributes, variations, ...same } = input;
      const product = withoutNulls({ ...same, sku: productSku, promotional_price: promotionalPrice, variation_attributes: variationAttributes, variations: variations?.map(withoutNulls) });
      const created = await writeThenRead({
        what: 'the service created the product',
        id: productSku,
        follow: `read it with product(sku: ${JSON.stringify(productSku)}).`,
        write: () => write(loaders, 'catalogue', () => client.createProduct(product)),
        read: () => loaders.product.load(productSku),
      });
      // Its variations' `product` is this one: known already, not worth a call.
      loaders.product.prime(created.sku, created);
      return created;
    },
  },
  Product: {
    __resolveReference: (reference, { loaders }) => loaders.product.load(reference.sku),
  },
};
