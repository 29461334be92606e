import { decodeCursor, encodeCursor } from '../../kit/cursors.ts';
import { badUserInput } from '../../kit/errors.ts';
import { followLog } from '../../kit/events/follow.ts';
import { resolveEvent } from '../../kit/events/eventTraces.ts';
import type { LoggedEvent } from '../../kit/events/eventLog.ts';
import type { InboundMessagePayload, StatusNotificationPayload } from '../events.ts';
import type { MessagingContext } from '../context.ts';
import { keywordTypeOf, subscriberStatusOf } from '../enums.ts';
import { id, keyword as keywordRule, mobileNumber } from '../validate.ts';
import type { InboundMessageFilter, Resolvers, SubscriberStatusFilter } from '../__generated__/resolvers.ts';

const CURSOR_KIND = 'messaging-events';

const positionOf = (after: string | null | undefined): string | undefined => (after ? String(decodeCursor<{ p: unknown }>(after, CURSOR_KIND, 'after').p) : undefined);
const inboundOf = (event: LoggedEvent) => event.payload as InboundMessagePayload;
const statusOf = (event: LoggedEvent) => event.payload as StatusNotificationPayload;
const sameKeyword = (a: string | null, b: string) => (a ?? '').trim().replace(/\s+/g, ' ').toUpperCase() === b.replace(/\s+/g, ' ').toUpperCase();

/** The filter's arguments checked, as the service's rules say, before anything streams. */
function inboundFilter(filter: InboundMessageFilter) {
  const storeId = id(filter.storeId, 'filter.storeId');
  const keyword = filter.keyword === null || filter.keyword === undefined ? undefined : keywordRule(filter.keyword, 'filter.keyword');
  const from = filter.from === null || filter.from === undefined ? undefined : mobileNumber(filter.from, 'filter.from');
  return {
    storeId,
    accepts: (event: LoggedEvent): boolean => {
      if (event.type !== 'message.inbound') return false;
      const payload = inboundOf(event);
      return payload.storeId === storeId && (keyword === undefined || sameKeyword(payload.keyword, keyword)) && (from === undefined || payload.from === from);
    },
  };
}

function statusFilter(filter: SubscriberStatusFilter) {
  const storeId = id(filter.storeId, 'filter.storeId');
  const mobileId = filter.mobileId === null || filter.mobileId === undefined ? undefined : mobileNumber(filter.mobileId, 'filter.mobileId');
  return {
    storeId,
    accepts: (event: LoggedEvent): boolean => {
      if (event.type !== 'message.status') return false;
      const payload = statusOf(event);
      return payload.storeId === storeId && (mobileId === undefined || payload.mobileId === mobileId);
    },
  };
}

/**
 * A subscription over the event log, for one store. The store is read with the caller's
 * credential before anything streams: a caller who cannot read it gets no events of it. Events
 * come from callbacks, which never carry the subscriber's credential, so it is checked again
 * while the subscription streams: refused then, the stream ends with the refusal as its last result.
 */
function followStore<Args extends { after?: string | null }>(filterOf: (args: Args) => { storeId: string; accepts(event: LoggedEvent): boolean }) {
  return {
    subscribe: async (_parent: unknown, args: Args, context: MessagingContext) => {
      const position = positionOf(args.after);
      const { storeId, accepts } = filterOf(args);
      const store = await context.client.getStore(storeId);
      if (!store) throw badUserInput('filter.storeId', 'names no store this credential can read');
      return followLog(context.events, position, accepts, { watch: (end) => context.watchCredential(storeId, end) });
    },
    resolve: (event: LoggedEvent, args: Args, context: MessagingContext) => {
      // Fields of one event share their reads (a store asked by the event and by its subscriber
      // is one call); nothing read for an earlier event is shown for this one.
      context.renewLoaders();
      return resolveEvent(event, args, context);
    },
  };
}

const eventFields = {
  id: (event: LoggedEvent) => event.dedupeKey,
  occurredAt: (event: LoggedEvent) => event.occurredAt,
  cursor: (event: LoggedEvent) => encodeCursor(CURSOR_KIND, { p: event.position }),
};

// Each event reads its store and subscriber afresh, through the loaders its `resolve` renewed.
export const eventResolvers: Resolvers = {
  Subscription: {
    inboundMessageReceived: followStore(({ filter }: { filter: InboundMessageFilter; after?: string | null }) => inboundFilter(filter)),
    subscriberStatusChanged: followStore(({ filter }: { filter: SubscriberStatusFilter; after?: string | null }) => statusFilter(filter)),
  },
  InboundMessageEvent: {
    ...eventFields,
    messageId: (event) => inboundOf(event).messageId,
    from: (event) => inboundOf(event).from,
    body: (event) => inboundOf(event).body,
    keyword: (event) => inboundOf(event).keyword,
    keywordId: (event) => inboundOf(event).keywordId,
    keywordType: (event) => keywordTypeOf(inboundOf(event).keywordType),
    subscriberStatus: (event) => subscriberStatusOf(inboundOf(event).subscriberStatus),
    storeId: (event) => inboundOf(event).storeId,
    store: (event, _args, { loaders }) => loaders.store.load(inboundOf(event).storeId),
    subscriber: (event, _args, { loaders }) => loaders.subscriber.load({ storeId: inboundOf(event).storeId, mobileId: inboundOf(event).from }),
  },
  SubscriberStatusEvent: {
    ...eventFields,
    succeeded: (event) => statusOf(event).succeeded,
    message: (event) => statusOf(event).message,
    messageId: (event) => statusOf(event).messageId,
    storeId: (event) => statusOf(event).storeId,
    mobileId: (event) => statusOf(event).mobileId,
    subscriberStatus: (event) => subscriberStatusOf(statusOf(event).subscriberStatus),
    reason: (event) => statusOf(event).reason,
    store: (event, _args, { loaders }) => loaders.store.load(statusOf(event).storeId),
    subscriber: (event, _args, { loaders }) => {
      const { storeId, mobileId } = statusOf(event);
      return mobileId ? loaders.subscriber.load({ storeId, mobileId }) : null;
    },
  },
};
