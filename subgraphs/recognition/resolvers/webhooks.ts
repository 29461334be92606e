import { graphError, ErrorCode, badUserInput } from '../../kit/errors.ts';
import { httpUrl } from '../../kit/validate.ts';
import type { WebhookDto, WebhookEventTypeDto } from '../client.ts';
import { maskWebhookSecret, type RecognitionContext } from '../context.ts';
import type { RecognitionLoaders } from '../loaders.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/**
 * A webhook as a mutation knows it: the upstream answers writes with only `{id}`, so what the
 * caller did not send is read from the list, once per write and only when selected.
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

/**
 * Runs a webhook write, then forgets the list: a later mutation of the same operation reads its
 * fields after its own write, not from before an earlier one. Forgotten even when the write
 * failed: a write that timed out may still have happened upstream.
 */
async function writing<T>(loaders: RecognitionLoaders, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } finally {
    loaders.forgetWebhooks();
  }
}

/** An empty list would subscribe to nothing; the service reads it as "not sent" instead. */
function eventTypesOf(value: readonly WebhookEventTypeDto[] | null | undefined): WebhookEventTypeDto[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (value.length === 0) throw badUserInput('input.eventTypes', 'must name at least one event type (leave it out to keep the default)');
  return [...value];
}

const DEFAULT_EVENT_TYPES: WebhookEventTypeDto[] = ['bonus.created', 'achievement_event.created'];

export const webhookResolvers: Resolvers = {
  Query: {
    webhooks: (_parent, _args, { loaders }) => loaders.webhooks.load('all'),
  },
  Mutation: {
    createWebhook: async (_parent, { input }, { client, loaders }) => {
      const url = httpUrl(input.url, 'input.url');
      const eventTypes = eventTypesOf(input.eventTypes);
      const { id } = await writing(loaders, () => client.createWebhook({ url, eventTypes }));
      return { id, url, event_types: eventTypes ?? DEFAULT_EVENT_TYPES };
    },
    updateWebhook: async (_parent, { id, input }, { client, loaders }) => {
      const url = input.url === null || input.url === undefined ? undefined : httpUrl(input.url, 'input.url');
      const eventTypes = eventTypesOf(input.eventTypes);
      const result = await writing(loaders, () => client.updateWebhook(id, { url, eventTypes }));
      return { id: result.id, ...(url ? { url } : {}), ...(eventTypes ? { event_types: eventTypes } : {}) };
    },
    deleteWebhook: (_parent, { id }, { client, loaders }) => writing(loaders, () => client.deleteWebhook(id)),
  },
  Webhook: {
    url: async (webhook, _args, context) => maskWebhookSecret(webhook.url ?? (await listed(webhook, context)).url),
    eventTypes: async (webhook, _args, context) => webhook.event_types ?? (await listed(webhook, context)).event_types,
  },
};
