import { LIMITS, type ProductDto } from '../client.ts';
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
      const created = await write(loaders, 'catalogue', () =>
        client.createProduct(withoutNulls({ ...same, sku: productSku, promotional_price: promotionalPrice, variation_attributes: variationAttributes, variations: variations?.map(withoutNulls) })),
      );
      if (!created) return loaders.product.load(productSku);
      // Its variations' `product` is this one: known already, not worth a call.
      loaders.product.prime(created.sku, created);
      return created;
    },
  },
  Product: {
    __resolveReference: (reference, { loaders }) => loaders.product.load(reference.sku),
  },
};
