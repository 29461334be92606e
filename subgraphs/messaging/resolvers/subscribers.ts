import { keywordTypeOf, subscriberStatusOf } from '../enums.ts';
import { id, mobileNumber, responderContent } from '../validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

export const subscriberResolvers: Resolvers = {
  Query: {
    subscriber: (_parent, args, { loaders }) => loaders.subscriber.load({ storeId: id(args.storeId, 'storeId'), mobileId: mobileNumber(args.mobileId, 'mobileId') }),
    mobileNumber: (_parent, args, { loaders }) => loaders.mobileNumber.load(mobileNumber(args.mobileId, 'mobileId')),
  },
  Mutation: {
    sendOptIn: async (_parent, { input }, { client }) => {
      const storeId = id(input.storeId, 'input.storeId');
      const mobileId = mobileNumber(input.mobileId, 'input.mobileId');
      const { messageId } = await client.sendOptIn({ storeId, mobileId, type: input.type });
      return { messageId, storeId, mobileId, type: input.type };
    },
    sendOptOut: async (_parent, args, { client }) => {
      const storeId = id(args.storeId, 'storeId');
      const mobileId = mobileNumber(args.mobileId, 'mobileId');
      return { ...(await client.sendOptOut({ storeId, mobileId })), storeId, mobileId };
    },
    setResponderContent: async (_parent, { input }, { client }) => {
      const storeId = id(input.storeId, 'input.storeId');
      const keywordId = id(input.keywordId, 'input.keywordId');
      const content = responderContent(input);
      await client.setResponderContent({ storeId, keywordId, ...content });
      return { storeId, keywordId, content: content.content ?? null, mediaUrl: content.mediaUrl ?? null };
    },
  },
  Subscriber: {
    __resolveReference: (reference, { loaders }) => loaders.subscriber.load({ storeId: reference.storeId, mobileId: reference.mobileId }),
    status: (subscriber) => subscriberStatusOf(subscriber.status),
    keywordType: (subscriber) => keywordTypeOf(subscriber.keywordType),
    store: (subscriber, _args, { loaders }) => loaders.store.load(subscriber.storeId),
  },
};
