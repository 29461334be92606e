import type { IncomingMessage } from 'node:http';
import { ErrorCode, graphError } from '../kit/errors.ts';
import { credentialHeader } from '../kit/server.ts';
import { secretMatches } from '../../lib/secretMatches.ts';

/** The gateway header with which an administrator proves who they are; forwarded to this subgraph only. */
export const ADMIN_TOKEN_HEADER = 'x-gateway-admin-token';

/**
 * One way a caller proves they administer the gateway, read from the headers the gateway forwarded.
 * Today the admin token. With the graph's own OAuth 2.0 the gateway also demands the
 * `gateway:admin` scope (the schema's `@requiresScopes`) and may hold the admin token for the
 * principal; a scope the gateway forwarded would be one more proof in the list, and nothing else
 * here would change.
 */
export type AdminProof = (headers: IncomingMessage['headers']) => boolean;

/** The caller's `x-gateway-admin-token` equals the configured token (constant time). No token configured: nobody. */
export function adminTokenProof(expected: string | undefined): AdminProof {
  return (headers) => {
    const given = credentialHeader(headers, ADMIN_TOKEN_HEADER);
    return expected !== undefined && given !== undefined && secretMatches(given, expected);
  };
}

export function isAdministrator(proofs: readonly AdminProof[], headers: IncomingMessage['headers']): boolean {
  return proofs.some((proof) => proof(headers));
}

/** Before any upstream call: the admin interface has no authentication of its own, so the graph must not open it. */
export function notAdministrator(): Error {
  return graphError(`administering the gateway needs an administrator: send the ${ADMIN_TOKEN_HEADER} header`, { code: ErrorCode.Forbidden, service: 'gatewayAdmin' });
}
