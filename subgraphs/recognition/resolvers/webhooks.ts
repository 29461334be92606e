import { graphError, ErrorCode } from '../../kit/errors.ts';
import { httpUrl } from '../../kit/validate.ts';
import type { WebhookDto, WebhookEventTypeDto } from '../client.ts';
import { maskWebhookSecret, type RecognitionContext } from '../context.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/**
 * A webhook as a mutation knows it: the upstream answers writes with only `{id}`, so what the
 * caller did not send is read from the list, once per request and only when selected.
 */
export interface WebhookParent {
  id: string;
  url?: string;
  event_types?: WebhookEventTypeDto[];
}

async function listed(parent: WebhookParent, { loaders }: RecognitionContext): Promise<WebhookDto> {
  const found = (await loaders.webhooks.load('all')).find((webhook) => webhook.id === parent.id);
  if (!found) throw graphError(`recognition: webhook ${parent.id} is not in the company's list`, { code: ErrorCode.NotFound, service: 'recognition' });
  return found;
}

const DEFAULT_EVENT_TYPES: WebhookEventTypeDto[] = ['bonus.created', 'achievement_event.created'];

export const webhookResolvers: Resolvers = {
  Query: {
    webhooks: (_parent, _args, { loaders }) => loaders.webhooks.load('all'),
  },
  Mutation: {
    createWebhook: async (_parent, { input }, { client }) => {
      const url = httpUrl(input.url, 'input.url');
      const eventTypes = input.eventTypes ?? undefined;
      const { id } = await client.createWebhook({ url, eventTypes });
      return { id, url, event_types: eventTypes && eventTypes.length ? [...eventTypes] : DEFAULT_EVENT_TYPES };
    },
    updateWebhook: async (_parent, { id, input }, { client }) => {
      const url = input.url === null || input.url === undefined ? undefined : httpUrl(input.url, 'input.url');
      const eventTypes = input.eventTypes && input.eventTypes.length ? [...input.eventTypes] : undefined;
      const result = await client.updateWebhook(id, { url, eventTypes });
      return { id: result.id, ...(url ? { url } : {}), ...(eventTypes ? { event_types: eventTypes } : {}) };
    },
    deleteWebhook: (_parent, { id }, { client }) => client.deleteWebhook(id),
  },
  Webhook: {
    url: async (webhook, _args, context) => maskWebhookSecret(webhook.url ?? (await listed(webhook, context)).url),
    eventTypes: async (webhook, _args, context) => webhook.event_types ?? (await listed(webhook, context)).event_types,
  },
};
