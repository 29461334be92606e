import type { IncomingMessage } from 'node:http';
import type { RestTransport } from '../kit/transport.ts';
import { credentialHeader } from '../kit/server.ts';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import type { EventLog } from '../kit/events/eventLog.ts';
import type { CredentialChecks } from '../kit/credentialChecks.ts';
import { CREDENTIAL_HEADER, createRecognitionClient, type RecognitionClient } from './client.ts';
import { createLoaders, type RecognitionLoaders } from './loaders.ts';
import { WEBHOOK_PATH } from './events.ts';

export interface RecognitionContext {
  client: RecognitionClient;
  loaders: RecognitionLoaders;
  events: EventLog;
  /** Checks the caller's credential upstream before a subscription streams, remembering the answer briefly. */
  verifyCredential(): Promise<void>;
  /**
   * Checks it again while the subscription streams, once per check TTL for all of this
   * credential's subscriptions in the process; `onRefused` when the service refuses it. Returns
   * what stops watching.
   */
  watchCredential(onRefused: (error: Error) => void): () => void;
}

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface RecognitionDependencies {
  transport: RestTransport;
  events: EventLog;
  credentialChecks: CredentialChecks;
}

/** One request's context: the caller's credential bound into a client, and fresh loaders over it. */
export function makeContext({ transport, events, credentialChecks }: RecognitionDependencies, headers: IncomingMessage['headers'] | Record<string, unknown>, scope?: CallScope): RecognitionContext {
  const token = credentialHeader(headers, CREDENTIAL_HEADER);
  const client = createRecognitionClient({ transport: scopedTransport(transport, scope), token, ...(scope ? { scope } : {}) });
  return {
    client,
    loaders: createLoaders(client, scope),
    events,
    // A method: an arrow function in a property is renamed at every request under tsx.
    verifyCredential() {
      return credentialChecks.check(token, () => client.verifyCredential());
    },
    watchCredential(onRefused) {
      return credentialChecks.watch(token, () => client.verifyCredential(), onRefused);
    },
  };
}

const OUR_WEBHOOK = new RegExp(`(${WEBHOOK_PATH.replace(/\//g, '\\/')}\\/)[^/?#]+`);

/** Our own ingestion URL carries the secret that authenticates deliveries: never show it. */
export function maskWebhookSecret(url: string): string {
  return url.replace(OUR_WEBHOOK, '$1[REDACTED]');
}
