import { nonBlank } from '../../kit/validate.ts';
import { pageNumberedConnection } from '../../kit/connections.ts';
import { SUBSCRIBER_PAGE_SIZE } from '../client.ts';
import { maskCallbackSecret } from '../context.ts';
import { keywordTypeOf } from '../enums.ts';
import { id } from '../validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

const SUBSCRIBERS_CURSOR = 'messaging-subscribers';

export const storeResolvers: Resolvers = {
  Query: {
    store: (_parent, args, { loaders }) => loaders.store.load(id(args.id, 'id')),
    account: (_parent, args, { loaders }) => loaders.account.load(id(args.id, 'id')),
  },
  Mutation: {
    deleteKeyword: async (_parent, args, { client }) => {
      const storeId = id(args.storeId, 'storeId');
      const keywordId = id(args.keywordId, 'keywordId');
      await client.deleteKeyword({ storeId, keywordId });
      return { storeId, keywordId };
    },
    setAutomation: async (_parent, { automation, enabled, ...args }, { client }) => {
      const storeId = id(args.storeId, 'storeId');
      await client.setAutomation({ storeId, type: automation, enabled });
      return { storeId, automation, enabled };
    },
    logIn: (_parent, { email, password }, { client }) => client.logIn({ email: nonBlank(email, 'email').trim(), password: nonBlank(password, 'password') }),
  },
  Store: {
    __resolveReference: (reference, { loaders }) => loaders.store.load(reference.id),
    inboundCallbackUrl: (store) => store.inboundCallbackUrl && maskCallbackSecret(store.inboundCallbackUrl),
    messageStatusUrl: (store) => store.messageStatusUrl && maskCallbackSecret(store.messageStatusUrl),
    subscribers: (store, args, { loaders }) =>
      pageNumberedConnection(SUBSCRIBERS_CURSOR, args, {
        defaultSize: SUBSCRIBER_PAGE_SIZE,
        maxSize: SUBSCRIBER_PAGE_SIZE,
        firstPage: 1,
        fixedPageSize: SUBSCRIBER_PAGE_SIZE,
        fetchPage: async (page) => {
          const { items, count } = await loaders.subscriberPage.load({ storeId: store.id, page });
          return { items, totalCount: count };
        },
      }),
  },
  Keyword: {
    type: (keyword) => keywordTypeOf(keyword.type),
  },
};

