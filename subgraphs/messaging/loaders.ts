import type DataLoader from 'dataloader';
import { createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { MessagingClient, StoreDto, SubscriberDto } from './client.ts';

export interface SubscriberKey {
  storeId: string;
  mobileId: string;
}

export interface MessagingLoaders {
  store: DataLoader<string, StoreDto | null>;
  subscriber: DataLoader<SubscriberKey, SubscriberDto | null, string>;
}

/** Built once per request, so nothing cached here outlives the caller whose credential fetched it. */
export function createLoaders(client: MessagingClient, scope?: CallScope): MessagingLoaders {
  const cancellation = cancelledWith(scope, 'messaging');
  return {
    store: createPerKeyLoader((id: string) => client.getStore(id), cancellation),
    subscriber: createPerKeyLoader((key: SubscriberKey) => client.getSubscriber(key.storeId, key.mobileId), { cacheKeyFn: (key) => `${key.storeId}\u0000${key.mobileId}`, ...cancellation }),
  };
}
