import type DataLoader from 'dataloader';
import { createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { AccountDto, MessagingClient, MobileNumberDto, StoreDto, SubscriberDto, SubscriberPageDto } from './client.ts';

export interface SubscriberKey {
  storeId: string;
  mobileId: string;
}

/** One of a store's numbered pages (from 1) of subscribers. */
export interface SubscriberPageKey {
  storeId: string;
  page: number;
}

/**
 * One request's reads: the same read asked for twice costs one call. An operation reaches one
 * store through many parents (each of its subscribers, each opt-in of a number, aliases), and
 * every such parent asking the store's first page of subscribers would otherwise fetch it again.
 */
export interface MessagingLoaders {
  store: DataLoader<string, StoreDto | null>;
  subscriber: DataLoader<SubscriberKey, SubscriberDto | null, string>;
  subscriberPage: DataLoader<SubscriberPageKey, SubscriberPageDto, string>;
  /** The account view, whose stores carry their automation settings: never taken for a store read by id. */
  account: DataLoader<string, AccountDto | null>;
  mobileNumber: DataLoader<string, MobileNumberDto | null>;
}

/** Built once per request, so nothing cached here outlives the caller whose credential fetched it. */
export function createLoaders(client: MessagingClient, scope?: CallScope): MessagingLoaders {
  const cancellation = cancelledWith(scope, 'messaging');
  return {
    store: createPerKeyLoader((id: string) => client.getStore(id), cancellation),
    subscriber: createPerKeyLoader((key: SubscriberKey) => client.getSubscriber(key.storeId, key.mobileId), { cacheKeyFn: (key) => `${key.storeId}\u0000${key.mobileId}`, ...cancellation }),
    subscriberPage: createPerKeyLoader((key: SubscriberPageKey) => client.listSubscribers(key.storeId, key.page), { cacheKeyFn: (key) => `${key.storeId}\u0000${key.page}`, ...cancellation }),
    account: createPerKeyLoader((id: string) => client.getAccount(id), cancellation),
    mobileNumber: createPerKeyLoader((mobileId: string) => client.getMobileNumber(mobileId), cancellation),
  };
}
