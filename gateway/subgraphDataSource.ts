import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher } from '@apollo/utils.fetcher';
import { GraphQLError } from 'graphql';

type GatewayGraphQLResponse = Awaited<ReturnType<RemoteGraphQLDataSource['process']>>;
import { ErrorCode, graphError } from '../subgraphs/kit/errors.ts';
import { GATEWAY_ORIGIN_HEADER } from '../subgraphs/kit/downloads.ts';
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
    if (context.origin) request.http?.headers.set(GATEWAY_ORIGIN_HEADER, context.origin);
  }

  /**
   * A subgraph refuses bad variables with HTTP 400 and typed GraphQL errors; Apollo's data source
   * would replace them with "400: Bad Request". Keep the subgraph's errors and codes.
   */
  override async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<GatewayGraphQLResponse> {
    try {
      return await super.process(options);
    } catch (error) {
      const body = error instanceof GraphQLError ? (error.extensions.response as { body?: unknown } | undefined)?.body : undefined;
      if (body && typeof body === 'object' && Array.isArray((body as { errors?: unknown }).errors)) {
        return { errors: (body as { errors: GatewayGraphQLResponse['errors'] }).errors };
      }
      throw error;
    }
  }

  override didEncounterError(error: Error): void {
    if (error instanceof GraphQLError) throw error;
    throw graphError(`the ${this.name} subgraph is unreachable`, { code: ErrorCode.UpstreamUnavailable, service: this.name });
  }
}
