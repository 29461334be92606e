import { badUserInput } from '../../kit/errors.ts';
import { offsetConnection, offsetWindow, pagesCovering } from '../../kit/connections.ts';
import { SUBSCRIBER_PAGE_SIZE } from '../client.ts';
import { maskCallbackSecret } from '../context.ts';
import { keywordTypeOf } from '../enums.ts';
import { id } from '../validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

const SUBSCRIBERS_CURSOR = 'messaging-subscribers';

export const storeResolvers: Resolvers = {
  Query: {
    store: (_parent, args, { loaders }) => loaders.store.load(id(args.id, 'id')),
    account: (_parent, args, { client }) => client.getAccount(id(args.id, 'id')),
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
    logIn: (_parent, { email, password }, { client }) => {
      if (!email.trim()) throw badInput('email');
      if (!password) throw badInput('password');
      return client.logIn({ email: email.trim(), password });
    },
  },
  Store: {
    __resolveReference: (reference, { loaders }) => loaders.store.load(reference.id),
    inboundCallbackUrl: (store) => store.inboundCallbackUrl && maskCallbackSecret(store.inboundCallbackUrl),
    messageStatusUrl: (store) => store.messageStatusUrl && maskCallbackSecret(store.messageStatusUrl),
    subscribers: async (store, args, { client }) => {
      const window = offsetWindow(SUBSCRIBERS_CURSOR, args, { defaultSize: SUBSCRIBER_PAGE_SIZE, maxSize: SUBSCRIBER_PAGE_SIZE });
      // The service's pages are fixed at 100: a window of at most 100 spans one page, or two when unaligned.
      const pages = pagesCovering(window, SUBSCRIBER_PAGE_SIZE, 1);
      const fetched = await Promise.all(pages.map((page) => client.listSubscribers(store.id, page)));
      const start = window.offset - (pages[0]! - 1) * SUBSCRIBER_PAGE_SIZE;
      const all = fetched.flatMap((page) => page.items);
      const items = all.slice(start, start + window.limit);
      const totalCount = fetched.at(-1)!.count;
      const hasNextPage = totalCount !== null ? window.offset + items.length < totalCount : fetched.at(-1)!.items.length === SUBSCRIBER_PAGE_SIZE;
      return { ...offsetConnection(SUBSCRIBERS_CURSOR, items, { offset: window.offset, hasNextPage }), totalCount };
    },
  },
  Keyword: {
    type: (keyword) => keywordTypeOf(keyword.type),
  },
};

const badInput = (argument: string) => badUserInput(argument, 'must not be blank');
