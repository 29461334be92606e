import type { IncomingMessage } from 'node:http';
import type { RestTransport } from '../kit/transport.ts';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import { credentialHeader } from '../kit/server.ts';
import type { EventLog } from '../kit/events/eventLog.ts';
import type { CredentialChecks } from '../kit/credentialChecks.ts';
import { CREDENTIAL_HEADER, createMessagingClient, type MessagingClient } from './client.ts';
import { createLoaders, type MessagingLoaders } from './loaders.ts';
import { CALLBACK_PATH } from './events.ts';

export interface MessagingContext {
  client: MessagingClient;
  loaders: MessagingLoaders;
  /**
   * Replaces `loaders` with fresh ones. A subscription's context lives as long as the subscription:
   * each event's fields must read the service afresh (the state after the event), sharing their
   * reads with each other only.
   */
  renewLoaders(): void;
  events: EventLog;
  /**
   * While a subscription to `storeId` streams, checks the caller's credential again by reading that
   * store, once per check TTL for all of this credential's subscriptions in the process;
   * `onRefused` when the service refuses it. Returns what stops watching.
   */
  watchCredential(storeId: string, onRefused: (error: Error) => void): () => void;
}

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface MessagingDependencies {
  transport: RestTransport;
  events: EventLog;
  credentialChecks: CredentialChecks;
}

/** One request's context: the caller's JWT bound into a client, and fresh loaders over it. */
export function makeContext({ transport, events, credentialChecks }: MessagingDependencies, headers: IncomingMessage['headers'] | Record<string, unknown>, scope?: CallScope): MessagingContext {
  const token = credentialHeader(headers, CREDENTIAL_HEADER);
  const client = createMessagingClient({ transport: scopedTransport(transport, scope), token });
  return {
    client,
    loaders: createLoaders(client, scope),
    renewLoaders() {
      this.loaders = createLoaders(client, scope);
    },
    events,
    // A method: an arrow function in a property is renamed at every request under tsx.
    watchCredential(storeId, onRefused) {
      // The service has no call that only checks a token: reading a store it opened says as much.
      // A store gone (null) says nothing of the credential, and ends nothing.
      return credentialChecks.watch(token, async () => void (await client.getStore(storeId)), onRefused);
    },
  };
}

const OUR_CALLBACK = new RegExp(`(${CALLBACK_PATH.replace(/\//g, '\\/')}\\/(?:inbound|status)\\/)[^/?#]+`);

/** Our own callback URLs carry the secret that authenticates deliveries: never show it. */
export function maskCallbackSecret(url: string): string {
  return url.replace(OUR_CALLBACK, '$1[REDACTED]');
}
