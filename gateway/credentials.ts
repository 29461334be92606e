import type { IncomingHttpHeaders } from 'node:http';
import { ALL_CREDENTIAL_HEADERS, SERVICES, credentialHeaderNames } from '../lib/services.ts';
import { trimmedAsHeader } from '../lib/http.ts';

/** Each subgraph's credential headers, by subgraph name: none of them may reach another subgraph. */
const HEADERS_OF = new Map(SERVICES.map((service) => [service.name, credentialHeaderNames(service)]));

/**
 * The headers a subgraph call carries: its own service's credential headers, copied from the
 * caller's request, and nothing else of the caller's.
 */
export function credentialHeadersFor(subgraph: string, incoming: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of HEADERS_OF.get(subgraph) ?? []) {
    const value = incoming[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value[0]! : value;
  }
  return out;
}

/**
 * A subgraph's credential headers as the subgraph reads them (trimmed as a header is, blank ones
 * absent: `credentialHeader` in `subgraphs/kit/server.ts`), for what must count one caller once.
 */
export function credentialKeyFor(subgraph: string, incoming: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(credentialHeadersFor(subgraph, incoming))) {
    const trimmed = trimmedAsHeader(value);
    if (trimmed) out[name] = trimmed;
  }
  return out;
}

const CREDENTIAL_HEADERS = new Set(ALL_CREDENTIAL_HEADERS);

/** Whether a header is some service's credential. */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name.toLowerCase());
}

/** The headers of which a caller must send at least one to use this subgraph's service. */
export function requiredCredentialHeaders(subgraph: string): readonly string[] {
  return HEADERS_OF.get(subgraph) ?? [];
}
