import type DataLoader from 'dataloader';
import { createOnceLoader, createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { FreightDto, MarketplaceClient, PlpDto, ProductDto, ProductPageDto, QuestionDto, QuestionPageDto, StatusTypeDto, StockDto, SymbolicReturnDto, VariationDto } from './client.ts';

export type QuestionPageKey = Parameters<MarketplaceClient['listQuestions']>[0];
export type ProductPageKey = Parameters<MarketplaceClient['listProducts']>[0];
export type StockPageKey = Parameters<MarketplaceClient['listStock']>[0];
export type SymbolicReturnsKey = Parameters<MarketplaceClient['listSymbolicReturns']>[0];

/**
 * One request's reads: the same read asked for twice (aliases, or several fields naming one
 * product) costs one upstream call, which matters under the service's 1-a-second budget.
 */
export interface MarketplaceLoaders {
  /** Products by SKU: questions naming the same product fetch it once. */
  product: DataLoader<string, ProductDto | null>;
  question: DataLoader<string, QuestionDto | null>;
  variation: DataLoader<string, VariationDto | null>;
  /** The seller's PLP list, fetched at most once per request. */
  labelGroups: DataLoader<'all', PlpDto[]>;
  /** A PLP's label data, by PLP id. */
  labels: DataLoader<string, unknown>;
  questionPages: DataLoader<QuestionPageKey, QuestionPageDto, string>;
  productPages: DataLoader<ProductPageKey, ProductPageDto, string>;
  stockPages: DataLoader<StockPageKey, StockDto[], string>;
  symbolicReturns: DataLoader<SymbolicReturnsKey, SymbolicReturnDto[], string>;
  freights: DataLoader<'all', FreightDto[]>;
  statusTypes: DataLoader<'all', StatusTypeDto[]>;
}

/** Parameters as a cache key: the same values give the same key whatever their order, and an absent one equals an undefined one. */
const paramsKey = (params: object): string =>
  JSON.stringify(
    Object.entries(params)
      .filter(([, value]) => value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

/** Built once per request, so nothing cached here outlives the caller whose credential fetched it. */
export function createLoaders(client: MarketplaceClient, scope?: CallScope): MarketplaceLoaders {
  const cancellation = cancelledWith(scope, 'marketplace');
  return {
    product: createPerKeyLoader((sku: string) => client.getProduct(sku), cancellation),
    question: createPerKeyLoader((id: string) => client.getQuestion(id), cancellation),
    variation: createPerKeyLoader((sku: string) => client.getVariation(sku), cancellation),
    labelGroups: createOnceLoader(() => client.listLabelGroups()),
    labels: createPerKeyLoader((id: string) => client.getLabels(id), cancellation),
    questionPages: createPerKeyLoader((params: QuestionPageKey) => client.listQuestions(params), { cacheKeyFn: paramsKey, ...cancellation }),
    productPages: createPerKeyLoader((params: ProductPageKey) => client.listProducts(params), { cacheKeyFn: paramsKey, ...cancellation }),
    stockPages: createPerKeyLoader((params: StockPageKey) => client.listStock(params), { cacheKeyFn: paramsKey, ...cancellation }),
    symbolicReturns: createPerKeyLoader((params: SymbolicReturnsKey) => client.listSymbolicReturns(params), { cacheKeyFn: paramsKey, ...cancellation }),
    freights: createOnceLoader(() => client.listFreights()),
    statusTypes: createOnceLoader(() => client.listStatusTypes()),
  };
}

/**
 * What each kind of write may change upstream. A product holds its variations, so a variation's
 * write changes its product and the product lists too.
 */
const CHANGED_BY = {
  labelGroups: ['labelGroups', 'labels'],
  questions: ['question', 'questionPages'],
  catalogue: ['product', 'productPages', 'variation'],
  fulfillment: ['stockPages'],
} as const satisfies Record<string, readonly (keyof MarketplaceLoaders)[]>;

/**
 * Runs a write, then forgets what the request has read of what it may have changed: the root
 * fields of a mutation run one after the other in one request, so a later field would otherwise
 * read the state from before this write (a new PLP missing from the list read for the previous
 * one). Forgotten even when the write fails, as a failed write may still have happened upstream.
 */
export async function write<T>(loaders: MarketplaceLoaders, changes: keyof typeof CHANGED_BY, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } finally {
    for (const name of CHANGED_BY[changes]) loaders[name].clearAll();
  }
}
