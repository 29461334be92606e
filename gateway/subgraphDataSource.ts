import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher } from '@apollo/utils.fetcher';
import { GraphQLError } from 'graphql';
import { ErrorCode, graphError } from '../subgraphs/kit/errors.ts';
import { credentialHeadersFor } from './credentials.ts';
import type { GatewayContext } from './server.ts';

/**
 * One subgraph as the gateway reaches it: the caller's credential for this subgraph's service and
 * nothing else; a subgraph that cannot be reached is a typed UPSTREAM_UNAVAILABLE, not a masked bug.
 */
export class SubgraphDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(
    readonly name: string,
    url: string,
    fetcher: Fetcher,
  ) {
    super({ url, fetcher });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    // Operations the gateway runs on its own (health checks) have no caller.
    if (!context?.headers) return;
    for (const [header, value] of Object.entries(credentialHeadersFor(this.name, context.headers))) request.http?.headers.set(header, value);
  }

  override didEncounterError(error: Error): void {
    if (error instanceof GraphQLError) throw error;
    throw graphError(`the ${this.name} subgraph is unreachable`, { code: ErrorCode.UpstreamUnavailable, service: this.name });
  }
}
