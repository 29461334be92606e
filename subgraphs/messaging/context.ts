import type { IncomingMessage } from 'node:http';
import type { RestTransport } from '../kit/transport.ts';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import { credentialHeader } from '../kit/server.ts';
import type { EventLog } from '../kit/events/eventLog.ts';
import { CREDENTIAL_HEADER, createMessagingClient, type MessagingClient } from './client.ts';
import { createLoaders, type MessagingLoaders } from './loaders.ts';
import { CALLBACK_PATH } from './events.ts';

export interface MessagingContext {
  client: MessagingClient;
  loaders: MessagingLoaders;
  events: EventLog;
}

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface MessagingDependencies {
  transport: RestTransport;
  events: EventLog;
}

/** One request's context: the caller's JWT bound into a client, and fresh loaders over it. */
export function makeContext({ transport, events }: MessagingDependencies, headers: IncomingMessage['headers'] | Record<string, unknown>, scope?: CallScope): MessagingContext {
  const client = createMessagingClient({ transport: scopedTransport(transport, scope), token: credentialHeader(headers, CREDENTIAL_HEADER) });
  return { client, loaders: createLoaders(client, scope), events };
}

const OUR_CALLBACK = new RegExp(`(${CALLBACK_PATH.replace(/\//g, '\\/')}\\/(?:inbound|status)\\/)[^/?#]+`);

/** Our own callback URLs carry the secret that authenticates deliveries: never show it. */
export function maskCallbackSecret(url: string): string {
  return url.replace(OUR_CALLBACK, '$1[REDACTED]');
}
