import type { Logger } from '../../lib/logger.ts';
import { WEBHOOK_EVENT_TYPES, type RecognitionClient } from './client.ts';
import { maskWebhookSecret } from './context.ts';
import { WEBHOOK_PATH } from './events.ts';

/**
 * Makes sure the service posts to this subgraph, idempotently: list; update our own webhook when
 * its secret or event types differ; create it when there is none; drop duplicates of ours.
 * Webhooks of anyone else are left alone.
 */
export async function ensureWebhook({ client, publicUrl, secret, logger }: { client: RecognitionClient; publicUrl: string; secret: string; logger: Logger }): Promise<'created' | 'updated' | 'unchanged'> {
  const base = `${publicUrl.replace(/\/+$/, '')}${WEBHOOK_PATH}/`;
  const wanted = `${base}${secret}`;
  const ours = (await client.listWebhooks()).filter((webhook) => webhook.url.startsWith(base));
  const complete = (types: readonly string[]) => WEBHOOK_EVENT_TYPES.every((type) => types.includes(type));
  const exact = ours.find((webhook) => webhook.url === wanted && complete(webhook.event_types));
  let outcome: 'created' | 'updated' | 'unchanged';
  let keep: string;
  if (exact) {
    outcome = 'unchanged';
    keep = exact.id;
  } else if (ours[0]) {
    keep = (await client.updateWebhook(ours[0].id, { url: wanted, eventTypes: WEBHOOK_EVENT_TYPES })).id;
    outcome = 'updated';
  } else {
    keep = (await client.createWebhook({ url: wanted, eventTypes: WEBHOOK_EVENT_TYPES })).id;
    outcome = 'created';
  }
  for (const duplicate of ours.filter((webhook) => webhook.id !== keep)) await client.deleteWebhook(duplicate.id);
  logger.info({ webhook: maskWebhookSecret(wanted), outcome }, 'recognition webhook registration');
  return outcome;
}
