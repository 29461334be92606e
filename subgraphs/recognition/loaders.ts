import type DataLoader from 'dataloader';
import { createOnceLoader, createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { RecognitionClient, RedemptionDto, RewardDto, WebhookDto } from './client.ts';

export interface RewardKey {
  id: string;
  requestCountry?: string | undefined;
}

export interface RecognitionLoaders {
  reward: DataLoader<RewardKey, RewardDto | null, string>;
  redemption: DataLoader<string, RedemptionDto | null>;
  /** The company's webhook list, fetched at most once per request. */
  webhooks: DataLoader<'all', WebhookDto[]>;
}

const rewardCacheKey = (key: RewardKey) => `${key.id}\u0000${key.requestCountry ?? ''}`;

/** Built once per request, so nothing cached here outlives the caller whose credential fetched it. */
export function createLoaders(client: RecognitionClient, scope?: CallScope): RecognitionLoaders {
  const cancellation = cancelledWith(scope, 'recognition');
  return {
    reward: createPerKeyLoader((key: RewardKey) => client.getReward(key.id, key.requestCountry), {
      cacheKeyFn: rewardCacheKey,
      ...cancellation,
    }),
    redemption: createPerKeyLoader((id: string) => client.getRedemption(id), cancellation),
    webhooks: createOnceLoader(() => client.listWebhooks()),
  };
}
