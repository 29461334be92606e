import { listSize } from '../../kit/validate.ts';
import { singleSegment } from '../../kit/paths.ts';
import { optionalName } from '../validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { LIMITS, type RedemptionDto } from '../client.ts';

export const rewardResolvers: Resolvers = {
  Query: {
    rewardCatalog: (_parent, { catalogCountry, requestCountry, personalizeFor }, { loaders }) =>
      loaders.rewardCatalog.load({
        catalogCountry: optionalName(catalogCountry, 'catalogCountry'),
        requestCountry: optionalName(requestCountry, 'requestCountry'),
        personalizeFor: optionalName(personalizeFor, 'personalizeFor'),
      }),
    reward: (_parent, { id, requestCountry }, { loaders }) => loaders.reward.load({ id, requestCountry: optionalName(requestCountry, 'requestCountry') }),
    redemption: (_parent, { id }, { loaders }) => loaders.redemption.load(id),
    redemptions: (_parent, { ids }, { client, loaders }) => {
      listSize(ids, 'ids', LIMITS.redemptionIds);
      // Checked here, or the loader's path would blame an `id` argument the caller never wrote.
      for (const id of ids) singleSegment(id, 'ids');
      // Without a credential the list fails once, not once per id.
      client.requireCredential();
      // Each entry is its own promise: its fields (its reward) are fetched as soon as it arrives, not
      // when the slowest id does, and a failing id nulls its own entry with its error at its index.
      // graphql-js takes a promise of null for a nullable item; codegen types only promises of the item.
      return ids.map((id) => loaders.redemption.load(id) as Promise<RedemptionDto>);
    },
  },
  CatalogReward: {
    imageUrl: (item) => item.image_url ?? null,
    minimumDisplayPrice: (item) => item.minimum_display_price ?? null,
    disclaimerHtml: (item) => item.disclaimer_html ?? null,
  },
  RewardDenomination: {
    displayPrice: (denomination) => denomination.display_price ?? null,
    reward: (denomination, _args, { loaders }) => loaders.reward.load({ id: denomination.id, requestCountry: denomination.request_country }),
  },
  Reward: {
    __resolveReference: (reference, { loaders }) => loaders.reward.load({ id: reference.id }),
    displayPrice: (reward) => reward.display_price ?? null,
    imageUrl: (reward) => reward.image_url ?? null,
    disclaimerHtml: (reward) => reward.disclaimer_html ?? null,
  },
  Redemption: {
    __resolveReference: (reference, { loaders }) => loaders.redemption.load(reference.id),
    createdAt: (redemption) => redemption.created_at ?? null,
    certificateUrl: (redemption) => redemption.certificate_url ?? null,
    claimUrl: (redemption) => redemption.claim_url ?? null,
    autoApprovable: (redemption) => redemption.auto_approvable ?? null,
    rewardDetails: (redemption) => redemption.reward_details ?? null,
    reward: (redemption, _args, { loaders }) => (redemption.reward_details ? loaders.reward.load({ id: redemption.reward_details.id }) : null),
  },
  RewardDetails: {
    displayPrice: (details) => details.display_price ?? null,
    imageUrl: (details) => details.image_url ?? null,
  },
};
