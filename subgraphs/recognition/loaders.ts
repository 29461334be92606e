import type DataLoader from 'dataloader';
import { createOnceLoader, createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type {
  ApiKeyDto,
  LeaderboardEntryDto,
  LeaderboardParams,
  RecognitionClient,
  RedemptionDto,
  RewardCatalogParams,
  RewardDto,
  RewardGroupDto,
  StandoutsParams,
  TrendDto,
  WebhookDto,
} from './client.ts';

export interface RewardKey {
  id: string;
  requestCountry?: string | undefined;
}

const rewardCacheKey = (key: RewardKey) => `${key.id}\u0000${key.requestCountry ?? ''}`;
// Arrays keep absent (null) apart from any text, and each resolver builds its parameters in one order.
const catalogueKey = ({ catalogCountry, requestCountry, personalizeFor }: RewardCatalogParams) => JSON.stringify([catalogCountry, requestCountry, personalizeFor]);
const leaderboardKey = ({ direction, hashtag, team, startDate, endDate }: LeaderboardParams) => JSON.stringify([direction, hashtag, team, startDate, endDate]);
const standoutsKey = ({ role, value, limit, period, customPropertyName, customPropertyValue }: StandoutsParams) =>
  JSON.stringify([role, value, limit, period, customPropertyName, customPropertyValue]);
const apiKeysKey = ({ userId }: { userId?: string | undefined }) => JSON.stringify([userId]);

/**
 * One request's loaders: each read of the service costs one call per distinct set of arguments,
 * however many fields of the request ask for it. Built once per request, so nothing cached here
 * outlives the caller whose credential fetched it.
 *
 * A class whose loaders are made on first use: a request pays only for the loaders it reads, and
 * the getters live on the prototype rather than being made again for every request (see the hot
 * path in docs/PERFORMANCE.md).
 */
export class RecognitionLoaders {
  #reward?: DataLoader<RewardKey, RewardDto | null, string>;
  #redemption?: DataLoader<string, RedemptionDto | null>;
  #webhooks?: DataLoader<'all', WebhookDto[]>;
  #apiKeys?: DataLoader<{ userId?: string | undefined }, ApiKeyDto[], string>;
  #trends?: DataLoader<'all', TrendDto[]>;
  #leaderboard?: DataLoader<LeaderboardParams, LeaderboardEntryDto[], string>;
  #standouts?: DataLoader<StandoutsParams, LeaderboardEntryDto[], string>;
  #rewardCatalog?: DataLoader<RewardCatalogParams, RewardGroupDto[], string>;

  constructor(
    private readonly client: RecognitionClient,
    private readonly cancellation: ReturnType<typeof cancelledWith>,
  ) {}

  get reward(): DataLoader<RewardKey, RewardDto | null, string> {
    return (this.#reward ??= createPerKeyLoader((key: RewardKey) => this.client.getReward(key.id, key.requestCountry), { cacheKeyFn: rewardCacheKey, ...this.cancellation }));
  }

  get redemption(): DataLoader<string, RedemptionDto | null> {
    return (this.#redemption ??= createPerKeyLoader((id: string) => this.client.getRedemption(id), this.cancellation));
  }

  /** The company's webhook list; `forgetWebhooks` after every webhook write. */
  get webhooks(): DataLoader<'all', WebhookDto[]> {
    return (this.#webhooks ??= createOnceLoader(() => this.client.listWebhooks()));
  }

  /** A user's keys; `forgetApiKeys` after every key write. */
  get apiKeys(): DataLoader<{ userId?: string | undefined }, ApiKeyDto[], string> {
    return (this.#apiKeys ??= createPerKeyLoader((params: { userId?: string | undefined }) => this.client.listApiKeys(params), { cacheKeyFn: apiKeysKey, ...this.cancellation }));
  }

  get trends(): DataLoader<'all', TrendDto[]> {
    return (this.#trends ??= createOnceLoader(() => this.client.getTrends()));
  }

  get leaderboard(): DataLoader<LeaderboardParams, LeaderboardEntryDto[], string> {
    return (this.#leaderboard ??= createPerKeyLoader((params: LeaderboardParams) => this.client.getLeaderboard(params), { cacheKeyFn: leaderboardKey, ...this.cancellation }));
  }

  get standouts(): DataLoader<StandoutsParams, LeaderboardEntryDto[], string> {
    return (this.#standouts ??= createPerKeyLoader((params: StandoutsParams) => this.client.getStandouts(params), { cacheKeyFn: standoutsKey, ...this.cancellation }));
  }

  get rewardCatalog(): DataLoader<RewardCatalogParams, RewardGroupDto[], string> {
    return (this.#rewardCatalog ??= createPerKeyLoader((params: RewardCatalogParams) => this.client.listRewards(params), { cacheKeyFn: catalogueKey, ...this.cancellation }));
  }

  /**
   * A webhook write makes the list read before it stale: the next field that needs the list (a
   * later mutation's `url`) must read it again, not answer from before the write.
   */
  forgetWebhooks(): void {
    this.#webhooks?.clearAll();
  }

  /** As `forgetWebhooks`, for API keys. */
  forgetApiKeys(): void {
    this.#apiKeys?.clearAll();
  }
}

export function createLoaders(client: RecognitionClient, scope?: CallScope): RecognitionLoaders {
  return new RecognitionLoaders(client, cancelledWith(scope, 'recognition'));
}
