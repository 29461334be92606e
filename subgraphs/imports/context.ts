import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../lib/logger.ts';
import type { RestTransport } from '../kit/transport.ts';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import { credentialHeader } from '../kit/server.ts';
import { CREDENTIAL_HEADER, createImportsClient, type ImportsClient } from './client.ts';
import { createLoaders, type ImportsLoaders } from './loaders.ts';
import type { StatusPoller } from './poller.ts';

export interface ImportsContext {
  client: ImportsClient;
  loaders: ImportsLoaders;
  /** The caller's API key, for the poller to read the job with while this caller watches it. */
  apikey: string | undefined;
  poller: StatusPoller;
}

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface ImportsDependencies {
  transport: RestTransport;
  /** The transport's base URL, `{import_url}/v1`. */
  baseUrl: string;
  poller: StatusPoller;
  logger?: Logger;
}

/** One request's (or subscription's) context: the caller's key bound into a client, and fresh loaders over it. */
export function makeContext({ transport, baseUrl, poller, logger }: ImportsDependencies, headers: IncomingMessage['headers'] | Record<string, unknown>, scope?: CallScope): ImportsContext {
  const apikey = credentialHeader(headers, CREDENTIAL_HEADER);
  const client = createImportsClient({ transport: scopedTransport(transport, scope), baseUrl, apikey, ...(logger ? { logger } : {}) });
  return { client, loaders: createLoaders(client, scope), apikey, poller };
}
