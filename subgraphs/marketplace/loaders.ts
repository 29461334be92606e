import type DataLoader from 'dataloader';
import { createOnceLoader, createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { MarketplaceClient, PlpDto, ProductDto, QuestionDto, VariationDto } from './client.ts';

export interface MarketplaceLoaders {
  /** Products by SKU: questions naming the same product fetch it once. */
  product: DataLoader<string, ProductDto | null>;
  question: DataLoader<string, QuestionDto | null>;
  variation: DataLoader<string, VariationDto | null>;
  /** The seller's PLP list, fetched at most once per request. */
  labelGroups: DataLoader<'all', PlpDto[]>;
  /** A PLP's label data, by PLP id. */
  labels: DataLoader<string, unknown>;
}

/** Built once per request, so nothing cached here outlives the caller whose credential fetched it. */
export function createLoaders(client: MarketplaceClient, scope?: CallScope): MarketplaceLoaders {
  const cancellation = cancelledWith(scope, 'marketplace');
  return {
    product: createPerKeyLoader((sku: string) => client.getProduct(sku), cancellation),
    question: createPerKeyLoader((id: string) => client.getQuestion(id), cancellation),
    variation: createPerKeyLoader((sku: string) => client.getVariation(sku), cancellation),
    labelGroups: createOnceLoader(() => client.listLabelGroups()),
    labels: createPerKeyLoader((id: string) => client.getLabels(id), cancellation),
  };
}
