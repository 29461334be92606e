import type { Requirement } from './requirements.ts';

/** Who is calling, as the graph's own authentication established it. */
export interface Principal {
  /** What service credentials are mapped by: the token's client id, else its subject, else the proxy's consumer. */
  id: string;
  subject?: string | undefined;
  clientId?: string | undefined;
  scopes: ReadonlySet<string>;
  via: 'jwt' | 'introspection' | 'proxy';
  /** Seconds since the epoch, when the token says. */
  expiresAt?: number | undefined;
}

export type Denial = 'UNAUTHENTICATED' | 'FORBIDDEN';

/** Why a caller may not see what `requirement` guards, or undefined when it may. */
export function denialOf(principal: Principal | undefined, requirement: Requirement | undefined): Denial | undefined {
  if (!requirement) return undefined;
  if (!principal) return requirement.authenticated || requirement.anyOf ? 'UNAUTHENTICATED' : undefined;
  if (!requirement.anyOf || requirement.anyOf.length === 0) return undefined;
  return requirement.anyOf.some((group) => group.every((scope) => principal.scopes.has(scope))) ? undefined : 'FORBIDDEN';
}

/** Scopes as OAuth 2.0 writes them (space-separated); some proxies join them with commas. */
export function parseScopes(raw: unknown): Set<string> {
  if (Array.isArray(raw)) return new Set(raw.filter((scope): scope is string => typeof scope === 'string' && scope !== ''));
  if (typeof raw !== 'string') return new Set();
  return new Set(raw.split(/[\s,]+/).filter(Boolean));
}

/** A key for caches of per-principal decisions: two principals with the same scopes decide alike. */
export const accessKeyOf = (principal: Principal | undefined) => (principal ? [...principal.scopes].sort().join(' ') : '\u0000anonymous');
