import type { IncomingHttpHeaders } from 'node:http';
import { SUBGRAPHS } from './subgraphs.ts';

/** Every header that is some service's credential; none of them may reach another service. */
const ALL_CREDENTIAL_HEADERS = new Set(SUBGRAPHS.flatMap((entry) => entry.credentialHeaders));

/**
 * The headers a subgraph call carries: its own service's credential headers, copied from the
 * caller's request, and nothing else of the caller's.
 */
export function credentialHeadersFor(subgraph: string, incoming: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string> {
  const entry = SUBGRAPHS.find((candidate) => candidate.name === subgraph);
  const out: Record<string, string> = {};
  if (!entry) return out;
  for (const name of entry.credentialHeaders) {
    const value = incoming[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value[0]! : value;
  }
  return out;
}

export function isCredentialHeader(name: string): boolean {
  return ALL_CREDENTIAL_HEADERS.has(name.toLowerCase());
}

/** The headers of which a caller must send at least one to use this subgraph's service. */
export function requiredCredentialHeaders(subgraph: string): readonly string[] {
  return SUBGRAPHS.find((candidate) => candidate.name === subgraph)?.credentialHeaders ?? [];
}
