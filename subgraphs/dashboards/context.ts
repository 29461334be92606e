import type { IncomingMessage } from 'node:http';
import type { RestTransport } from '../kit/transport.ts';
import { credentialHeader } from '../kit/server.ts';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import { CREDENTIAL_HEADER, createDashboardsClient, type DashboardsClient, type StatsDto } from './client.ts';
import { createLoaders, type DashboardsLoaders } from './loaders.ts';

export interface DashboardsContext {
  client: DashboardsClient;
  loaders: DashboardsLoaders;
}

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface DashboardsDependencies {
  transport: RestTransport;
  onStats?: (stats: StatsDto) => void;
}

/** One request's context: the caller's token bound into a client, and fresh loaders over it. */
export function makeContext({ transport, onStats }: DashboardsDependencies, headers: IncomingMessage['headers'], scope?: CallScope): DashboardsContext {
  const client = createDashboardsClient({ transport: scopedTransport(transport, scope), token: credentialHeader(headers, CREDENTIAL_HEADER), ...(onStats ? { onStats } : {}) });
  return { client, loaders: createLoaders(client, scope) };
}
