/** How codegen maps the recognition schema onto the client's DTOs. Read by the root codegen.ts. */
export const recognitionCodegen = {
  schema: 'schema/recognition.graphql',
  output: 'subgraphs/recognition/__generated__/resolvers.ts',
  contextType: '../context.ts#RecognitionContext',
  mappers: {
    ApiKey: '../client.ts#ApiKeyDto',
    CreateApiKeyPayload: '../client.ts#CreatedApiKeyDto',
    HashtagTrend: '../client.ts#TrendDto',
    LeaderboardEntry: '../client.ts#LeaderboardEntryDto',
    User: '../client.ts#UserDto',
    RewardGroup: '../client.ts#RewardGroupDto',
    CatalogReward: '../client.ts#CatalogRewardDto',
    RewardDenomination: '../client.ts#DenominationDto',
    Reward: '../client.ts#RewardDto',
    RichText: '../client.ts#RichTextDto',
    Redemption: '../client.ts#RedemptionDto',
    RewardDetails: '../client.ts#RewardDetailsDto',
    Webhook: '../resolvers/webhooks.ts#WebhookParent',
  },
  enumValues: {
    WebhookEventType: '../enums.ts#WebhookEventType',
    LeaderboardDirection: '../enums.ts#LeaderboardDirection',
    UserStatus: '../enums.ts#UserStatus',
  },
  scalars: { DateTime: 'string', Date: 'string' },
};
