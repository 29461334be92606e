import type { IncomingMessage } from 'node:http';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import { badUserInput } from '../kit/errors.ts';
import type { RestTransport } from '../kit/transport.ts';
import { isAdministrator, notAdministrator, type AdminProof } from './authorization.ts';
import { createGatewayAdminClient, type GatewayAdminClient } from './client.ts';
import { createLoaders, type GatewayAdminLoaders } from './loaders.ts';

export interface AdminAccess {
  client: GatewayAdminClient;
  loaders: GatewayAdminLoaders;
}

export interface GatewayAdminContext {
  /**
   * The admin interface, for an administrator; FORBIDDEN for anyone else, before any call. Each
   * administration field calls it once: past `MAX_ADMIN_FIELDS` in one operation it refuses.
   */
  admin(): AdminAccess;
  /** The gateway's public proxy origin (the explorer's OAuth host); blank when not configured. */
  proxyUrl: string;
}

/**
 * Administration fields one operation may hold. explorerSettings reads four things (the API, its
 * plugins, the global plugins, the applications), the last three paged lists of at most
 * `MAX_LIST_PAGES` (client.ts) calls each; every page is a call of the request's budget, which bounds the rest.
 */
export const MAX_ADMIN_FIELDS = 20;

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface GatewayAdminDependencies {
  transport: RestTransport;
  proofs: readonly AdminProof[];
  proxyUrl: string | undefined;
}

/**
 * One request's context. Resolvers reach the admin interface only through `admin()`, so no field
 * can forget the check: a caller who is not an administrator never gets a client.
 */
export function makeContext({ transport, proofs, proxyUrl }: GatewayAdminDependencies, headers: IncomingMessage['headers'], scope?: CallScope): GatewayAdminContext {
  let access: AdminAccess | undefined;
  let fields = 0;
  const authorised = isAdministrator(proofs, headers);
  return {
    proxyUrl: proxyUrl ?? '',
    admin() {
      if (!authorised) throw notAdministrator();
      fields += 1;
      if (fields > MAX_ADMIN_FIELDS) throw badUserInput('operation', `one operation may hold at most ${MAX_ADMIN_FIELDS} administration fields; send the rest in another`);
      if (!access) {
        const client = createGatewayAdminClient({ transport: scopedTransport(transport, scope) });
        access = { client, loaders: createLoaders(client, scope) };
      }
      return access;
    },
  };
}
