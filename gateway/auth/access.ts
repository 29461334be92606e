import { createHash } from 'node:crypto';
import { getOperationAST, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { wrapExecutor, type GatewayInterface } from '../wrapExecutor.ts';
import { createBoundedCache } from '../../lib/boundedCache.ts';
import { accessKeyOf, type Principal } from './principal.ts';
import { applyRemovals, restrictOperation, type Restricted } from './fieldAccess.ts';
import type { AccessRequirements } from './requirements.ts';


/** No operation of the document answers to the request's operation name. */
const UNRESOLVED = Symbol('unresolved');

/**
 * The graph's field-level authorization: which parts of an operation a principal may see, decided
 * once per (operation, set of scopes) and remembered, so a repeat costs a map look-up.
 *
 * Decisions on a parsed document (keyed by its hash or printed text) and on a client's raw text
 * live under separate prefixes: a text is any string a client sends, and `#` starts a comment, so
 * a text equal to a document key once found that document's decision, made on nothing: a caller
 * sent `#<hash of Q>`, which parses to no operation, then Q, which ran whole past its scopes.
 * Nothing is decided, nor remembered, for an operation that does not resolve.
 */
/** What the decisions keyed by operation text may hold (strings count two bytes a character). */
export const DECISION_CACHE_BYTES = 16 * 1024 * 1024;

export function createFieldAccess({ schema, requirements, cacheSize = 2000, maxTokens }: { schema: GraphQLSchema; requirements: AccessRequirements; cacheSize?: number; maxTokens?: number }) {
  // Keyed by operation text too: bounded in bytes as well as in entries (2,000 texts of 570 KB were 1.1 GB).
  const decisions = createBoundedCache<Restricted | null>(cacheSize, { maxBytes: DECISION_CACHE_BYTES, sizeOf: (key) => key.length * 2 + 256 });
  const decide = (key: string, document: () => DocumentNode | undefined, operationName: string | null | undefined, principal: Principal | undefined): Restricted | null | typeof UNRESOLVED => {
    const cacheKey = `${accessKeyOf(principal)}\u0000${operationName ?? ''}\u0000${key}`;
    let decision = decisions.get(cacheKey);
    if (decision === undefined) {
      const parsed = document();
      if (!parsed || !getOperationAST(parsed, operationName ?? undefined)) return UNRESOLVED;
      decision = restrictOperation(schema, requirements, parsed, operationName, principal) ?? null;
      decisions.set(cacheKey, decision);
    }
    return decision;
  };
  return {
    /**
     * What to remove from a validated operation for this principal; undefined when nothing, or when
     * no operation resolves (Apollo Server then answers OPERATION_RESOLUTION_FAILURE, running nothing).
     */
    restrict(document: DocumentNode, operationName: string | null | undefined, principal: Principal | undefined, documentKey: string): Restricted | undefined {
      if (requirements.size === 0) return undefined;
      const decision = decide(`d\u0000${documentKey}`, () => document, operationName, principal);
      return decision === UNRESOLVED || decision === null ? undefined : decision;
    },
    /**
     * Whether an operation's text, not yet parsed (the fast paths), may be served whole to this
     * principal: it parses, resolves to one operation, and nothing in it is out of the principal's
     * reach. Anything else goes through Apollo Server, which refuses or restricts it.
     */
    servesWhole(text: string, operationName: string | null | undefined, principal: Principal | undefined): boolean {
      if (requirements.size === 0) return true;
      const decision = decide(
        `t\u0000${text}`,
        () => {
          try {
            return parse(text, { maxTokens });
          } catch {
            return undefined;
          }
        },
        operationName,
        principal,
      );
      return decision === null;
    },
    /** What the decisions keyed by operation text hold, as their bound counts it. */
    get cachedBytes() {
      return decisions.bytes;
    },
  };
}

export type FieldAccess = ReturnType<typeof createFieldAccess>;

/**
 * Runs every operation without the fields its caller may not see, then puts them back as nulls
 * with errors. The restricted operation has its own text and hash, so Apollo plans and caches it
 * as the different operation it is: a plan is never shared between callers who see different fields.
 */
export function withFieldAccess(gateway: GatewayInterface, access: FieldAccess, principalOf: (context: unknown) => Principal | undefined): GatewayInterface {
  return wrapExecutor(gateway, (inner) => async (requestContext) => {
    const restricted = access.restrict(requestContext.document, requestContext.operationName, principalOf(requestContext.context), requestContext.queryHash);
    if (!restricted) return inner(requestContext);
    if (restricted.empty) return applyRemovals({}, restricted.removals, requestContext.request.variables);
    const result = await inner({
      ...requestContext,
      document: restricted.document,
      source: restricted.text,
      queryHash: createHash('sha256').update(restricted.text).digest('hex'),
      operation: getOperationAST(restricted.document)!,
      request: { ...requestContext.request, query: restricted.text },
    });
    const applied = applyRemovals(result.data as Record<string, unknown> | null | undefined, restricted.removals, requestContext.request.variables);
    const errors = [...(result.errors ?? []), ...applied.errors];
    // Every removal left out by @skip or @include: no `errors` at all, as without the removals.
    return { ...result, data: applied.data, errors: errors.length ? errors : undefined };
  });
}
