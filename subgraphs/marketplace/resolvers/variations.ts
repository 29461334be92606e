import { badUserInput } from '../../kit/errors.ts';
import { toNumber } from '../../kit/envelopes.ts';
import { httpUrl, intInRange, nonBlank } from '../../kit/validate.ts';
import { LIMITS, type VariationChangesDto, type VariationDto } from '../client.ts';
import type { Resolvers, SpecificationInput } from '../__generated__/resolvers.ts';
import { write, type MarketplaceLoaders } from '../loaders.ts';
import { sku, writeThenRead } from './products.ts';

/**
 * A price as the service wants it: decimal text with two places, such as `49.90`. Its cents must
 * be a safe integer: beyond that a double cannot tell neighbouring cents apart, and from 1e21
 * `toFixed` writes exponent notation (`1e+21`), which the service refuses.
 */
export function priceText(price: number, argument: string): string {
  if (!Number.isFinite(price) || price < 0) throw badUserInput(argument, `must be a non-negative amount; got ${price}`);
  if (!Number.isSafeInteger(Math.round(price * 100))) throw badUserInput(argument, `must be at most ${(Number.MAX_SAFE_INTEGER / 100).toFixed(2)}; got ${price}`);
  if (Math.abs(Math.round(price * 100) - price * 100) > 1e-6) throw badUserInput(argument, `may have at most two decimal places; got ${price}`);
  return price.toFixed(2);
}

function specifications(list: readonly SpecificationInput[], argument: string): { key: string; value: string }[] {
  return list.map(({ key, value }) => {
    nonBlank(key, `${argument}.key`);
    // A `price` specification sets the price: it must be decimal text like the price update sends.
    if (key === 'price' && !/^\d+(\.\d{1,2})?$/.test(value)) throw badUserInput(`${argument}.value`, `a price must be decimal text such as "49.90"; got ${JSON.stringify(value)}`);
    return { key, value };
  });
}

/** A variation's change, then the variation: from the answer, else read back (`writeThenRead`). */
function changed(variationSku: string, loaders: MarketplaceLoaders, change: () => Promise<VariationDto | null>): Promise<VariationDto> {
  return writeThenRead({
    what: 'the service updated the variation',
    id: variationSku,
    follow: `read it with variation(sku: ${JSON.stringify(variationSku)}).`,
    write: () => write(loaders, 'catalogue', change),
    read: () => loaders.variation.load(variationSku),
  });
}

export const variationResolvers: Resolvers = {
  Query: {
    variation: (_parent, args, { loaders }) => loaders.variation.load(sku(args.sku, 'sku')),
  },
  Mutation: {
    updateVariation: async (_parent, args, { client, loaders }) => {
      const { input } = args;
      const variationSku = sku(args.sku, 'sku');
      const changes: VariationChangesDto = {};
      if (input.qty !== null && input.qty !== undefined) changes.qty = intInRange(input.qty, 'input.qty', 0, LIMITS.qty)!;
      if (input.ean !== null && input.ean !== undefined) changes.ean = nonBlank(input.ean, 'input.ean');
      if (input.images) changes.images = input.images.map((image) => httpUrl(image, 'input.images'));
      if (input.specifications) changes.specifications = specifications(input.specifications, 'input.specifications');
      if (Object.keys(changes).length === 0) throw badUserInput('input', 'give at least one of qty, ean, images and specifications');
      return changed(variationSku, loaders, () => client.updateVariation(variationSku, changes));
    },
    updateVariationPrice: async (_parent, args, { client, loaders }) => {
      const variationSku = sku(args.sku, 'sku');
      const price = priceText(args.price, 'price');
      return changed(variationSku, loaders, () => client.updateVariationPrice(variationSku, price));
    },
    deleteVariation: async (_parent, args, { client, loaders }) => {
      const variationSku = sku(args.sku, 'sku');
      await write(loaders, 'catalogue', () => client.deleteVariation(variationSku));
      return { sku: variationSku };
    },
  },
  Variation: {
    __resolveReference: (reference, { loaders }) => loaders.variation.load(reference.sku),
    price: (variation) => toNumber(variation.specifications.find((specification) => specification.key === 'price')?.value) ?? null,
    product: (variation, _args, { loaders }) => (variation.product_sku ? loaders.product.load(variation.product_sku) : null),
  },
};
