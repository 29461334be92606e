/** How codegen maps the messaging schema onto the client's DTOs. Read by the root codegen.ts. */
export const messagingCodegen = {
  schema: 'schema/messaging.graphql',
  output: 'subgraphs/messaging/__generated__/resolvers.ts',
  contextType: '../context.ts#MessagingContext',
  mappers: {
    Store: '../client.ts#StoreDto',
    Keyword: '../client.ts#KeywordDto',
    Subscriber: '../client.ts#SubscriberDto',
    MobileNumber: '../client.ts#MobileNumberDto',
    Account: '../client.ts#AccountDto',
    AccountUser: '../client.ts#AccountUserDto',
    InboundMessageEvent: '../../kit/events/eventLog.ts#LoggedEvent',
    SubscriberStatusEvent: '../../kit/events/eventLog.ts#LoggedEvent',
  },
  enumValues: {
    SubscriberStatus: '../enums.ts#SubscriberStatus',
    KeywordType: '../enums.ts#KeywordType',
    OptInType: '../enums.ts#OptInType',
    Automation: '../enums.ts#Automation',
  },
  scalars: { DateTime: 'string' },
};
