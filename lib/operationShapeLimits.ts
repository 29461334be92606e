import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
  parse,
} from 'graphql';
import { readInt, type Env } from './config.ts';

export interface OperationLimits {
  /** Deepest field nesting accepted. */
  maxDepth: number;
  /** Most fields selected in one operation, fragments expanded. */
  maxFields: number;
  /** Most aliased fields in one operation, fragments expanded. */
  maxAliases: number;
  /** Most fields selected at the root of one operation, fragments expanded. */
  maxRootFields: number;
  /**
   * Most lexical tokens in one document, counted while it is parsed: the parse stops there. The
   * four bounds above are measured on a parsed document, and only on its operations' selections;
   * this one bounds what parsing, validating and remembering a document costs before anything is
   * built from it. 20,000 operations of `query Qn { __typename }` (100,000 tokens) cost 350 ms a
   * request, 55,000 repeated `@skip` 290 ms, 20,000 unused fragments 300 ms; each was refused
   * only after all of it had been parsed and walked, and was too large for the document store to
   * keep, so a repeat cost as much again.
   */
  maxTokens: number;
  /**
   * Most operations and fragments in one document. Within the token bound, many small definitions
   * still cost: graphql-js's rules do work for each operation, so 3,990 operations of one field
   * (just under 20,000 tokens) took 65 to 140 ms at the gateway, and 16,000 (under a subgraph's
   * 80,000) 260 to 320 ms on every request, too large for its store. Refused before any rule walks them.
   */
  maxDefinitions: number;
}

/**
 * Tokens allowed per field of `MAX_QUERY_FIELDS` when `MAX_QUERY_TOKENS` is unset: an alias, a
 * name, three arguments (a literal, two variables) and braces take 16 (1,000 such fields: 15,913
 * tokens); the rest is room for variable definitions, fragments and directives.
 */
const TOKENS_PER_FIELD = 20;

/** The gateway's defaults for what a client may send (`MAX_QUERY_DEPTH`, `_FIELDS`, `_ALIASES`, `_ROOT_FIELDS`, `_TOKENS`). */
export const GATEWAY_OPERATION_LIMITS: Readonly<OperationLimits> = { maxDepth: 12, maxFields: 1000, maxAliases: 100, maxRootFields: 50, maxTokens: 1000 * TOKENS_PER_FIELD, maxDefinitions: 250 };

/** How many times the gateway's limits a subgraph accepts. */
const SUBGRAPH_HEADROOM = 4;

/**
 * `MAX_QUERY_DEPTH`, `MAX_QUERY_FIELDS`, `MAX_QUERY_ALIASES`, `MAX_QUERY_ROOT_FIELDS`,
 * `MAX_QUERY_TOKENS`, `MAX_QUERY_DEFINITIONS`: what the gateway takes from a client. Unset, the token bound follows the
 * field bound, so raising `MAX_QUERY_FIELDS` alone never leaves an operation within it unparsed.
 */
export function readOperationLimits(env: Env): OperationLimits {
  const maxFields = readInt(env, 'MAX_QUERY_FIELDS', GATEWAY_OPERATION_LIMITS.maxFields, { min: 10, max: 100_000 });
  return {
    maxDepth: readInt(env, 'MAX_QUERY_DEPTH', GATEWAY_OPERATION_LIMITS.maxDepth, { min: 2, max: 100 }),
    maxFields,
    maxAliases: readInt(env, 'MAX_QUERY_ALIASES', GATEWAY_OPERATION_LIMITS.maxAliases, { min: 1, max: 100_000 }),
    maxRootFields: readInt(env, 'MAX_QUERY_ROOT_FIELDS', GATEWAY_OPERATION_LIMITS.maxRootFields, { min: 1, max: 10_000 }),
    maxTokens: readInt(env, 'MAX_QUERY_TOKENS', maxFields * TOKENS_PER_FIELD, { min: 1000, max: 10_000_000 }),
    maxDefinitions: readInt(env, 'MAX_QUERY_DEFINITIONS', GATEWAY_OPERATION_LIMITS.maxDefinitions, { min: 1, max: 100_000 }),
  };
}

/** What a subgraph accepts when the gateway takes `limits` (below). */
export function withSubgraphHeadroom(limits: OperationLimits): OperationLimits {
  return {
    maxDepth: limits.maxDepth * SUBGRAPH_HEADROOM,
    maxFields: limits.maxFields * SUBGRAPH_HEADROOM,
    maxAliases: limits.maxAliases * SUBGRAPH_HEADROOM,
    maxRootFields: limits.maxRootFields * SUBGRAPH_HEADROOM,
    maxTokens: limits.maxTokens * SUBGRAPH_HEADROOM,
    maxDefinitions: limits.maxDefinitions * SUBGRAPH_HEADROOM,
  };
}

/**
 * What a subgraph accepts on its own `/graphql` (HTTP, batches of reads, WebSocket): 48 deep,
 * 4,000 fields, 400 aliases, 200 root fields, 80,000 tokens, 1,000 definitions. Its port is reachable without the gateway, and one
 * request of 55,000 aliases cost it 310 to 700 ms. It must still take every fetch the gateway plans
 * for an operation within the gateway's limits, and Apollo's planner adds to what the client asked:
 * `__typename` in selection sets of abstract types; `__typename` and the key fields (two at most
 * here, `Subscriber`'s `storeId mobileId`) where the operation goes on in another subgraph; that
 * fetch's `_entities` level, which starts at the entity, so no deeper than the client's operation;
 * an alias where a field's type differs between branches in one subgraph (this graph has no
 * interface or union). The gateway adds a subscription's cursor alias. At most three fields added
 * for each field asked: four times holds whatever the client's shape
 * (test/unit/subgraphOperationLimits.test.ts measures the fetches planned at the gateway's limits).
 * These are four times the defaults; a subgraph reads the same `MAX_QUERY_*` settings as the
 * gateway and takes four times those (`readSubgraphBasics`): give both processes the same values.
 */
export const SUBGRAPH_OPERATION_LIMITS: Readonly<OperationLimits> = withSubgraphHeadroom(GATEWAY_OPERATION_LIMITS);

/** What a selection set costs to expand, relative to where it sits. Counts saturate at `cap`. */
export interface Measure {
  /** Deepest field nesting below the selection set (a field of it is at depth 1). */
  depth: number;
  fields: number;
  aliases: number;
  /** Fields at the selection set's own level. */
  topFields: number;
}

export interface DocumentShape {
  /** A fragment spread that names no fragment, or fragments that spread each other in a circle. */
  fragmentProblems: string[];
  /** Each operation's measure, fragments expanded; absent when the fragments have problems. */
  operations: Map<OperationDefinitionNode, Measure>;
  /** Selection sets walked: at most one per selection set written in the document. */
  visits: number;
}

const saturate = (value: number, cap: number) => (value > cap ? cap + 1 : value);

/** Fragments spread by a selection set, directly or through inline fragments. */
function spreadsOf(selectionSet: SelectionSetNode, into: string[] = []): string[] {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FRAGMENT_SPREAD) into.push(selection.name.value);
    else if (selection.selectionSet) spreadsOf(selection.selectionSet, into);
  }
  return into;
}

/** Unknown fragments and cycles, found with one walk over the spread graph (linear in the document). */
function fragmentProblems(fragments: ReadonlyMap<string, FragmentDefinitionNode>, document: DocumentNode): string[] {
  const problems = new Set<string>();
  const spreads = new Map<string, string[]>();
  for (const [name, fragment] of fragments) spreads.set(name, spreadsOf(fragment.selectionSet));
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const name of spreadsOf(definition.selectionSet)) if (!fragments.has(name)) problems.add(`unknown fragment "${name}"`);
  }
  const state = new Map<string, 'open' | 'done'>();
  for (const start of fragments.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first search: a long chain of fragments cannot overflow the stack.
    const stack: { name: string; next: number }[] = [{ name: start, next: 0 }];
    state.set(start, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const targets = spreads.get(top.name)!;
      if (top.next >= targets.length) {
        state.set(top.name, 'done');
        stack.pop();
        continue;
      }
      const target = targets[top.next++]!;
      if (!fragments.has(target)) {
        problems.add(`unknown fragment "${target}"`);
        continue;
      }
      const seen = state.get(target);
      if (seen === 'open') problems.add(`fragment "${target}" spreads itself (through ${stack.map((entry) => entry.name).join(' -> ')})`);
      else if (!seen) {
        state.set(target, 'open');
        stack.push({ name: target, next: 0 });
      }
    }
  }
  return [...problems];
}

/**
 * Measures every operation of a document, each fragment once: expanding spreads as written costs
 * exponential time (nine fragments each spreading the next eight times took seconds). Refuses to
 * measure (and reports) unknown or cyclic fragments first, so the walk always ends. Counts past
 * `cap` saturate, so a fragment expanded 8^40 times stays a small number.
 */
export function measureDocument(document: DocumentNode, cap: number): DocumentShape {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const shape: DocumentShape = { fragmentProblems: fragmentProblems(fragments, document), operations: new Map(), visits: 0 };
  if (shape.fragmentProblems.length) return shape;

  const measured = new Map<string, Measure>();
  const measure = (selectionSet: SelectionSetNode): Measure => {
    shape.visits += 1;
    const total: Measure = { depth: 0, fields: 0, aliases: 0, topFields: 0 };
    const add = (inner: Measure, nested: boolean) => {
      total.depth = Math.max(total.depth, inner.depth + (nested ? 1 : 0));
      total.fields = saturate(total.fields + inner.fields, cap);
      total.aliases = saturate(total.aliases + inner.aliases, cap);
      if (!nested) total.topFields = saturate(total.topFields + inner.topFields, cap);
    };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        add({ depth: 1, fields: 1, aliases: selection.alias ? 1 : 0, topFields: 1 }, false);
        if (selection.selectionSet) {
          const inner = measure(selection.selectionSet);
          // Below `__schema` and `__type` the depth is the type system's, not the upstreams': every
          // introspection tool nests `ofType` 7 to 9 times (depth 13 to 15). Its fields still count,
          // and graphql-js's MaxIntrospectionDepthRule bounds the lists that could multiply.
          add(selection.name.value.startsWith('__') ? { ...inner, depth: 0 } : inner, true);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        add(measure(selection.selectionSet), false);
      } else {
        const name = selection.name.value;
        let inner = measured.get(name);
        if (!inner) {
          inner = measure(fragments.get(name)!.selectionSet);
          measured.set(name, inner);
        }
        add(inner, false);
      }
    }
    return total;
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) shape.operations.set(definition, measure(definition.selectionSet));
  }
  return shape;
}

const refusal = (message: string, node: OperationDefinitionNode | DocumentNode) => new GraphQLError(message, { nodes: [node], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });

/**
 * Refuses documents of too many operations and fragments, then operations too deep, too wide, with
 * too many aliases or root fields before they are
 * planned or run: a single request cannot make the gateway fan out, or a subgraph work, without
 * bound. Runs as a validation rule, so every transport shares it; its cost is linear in the
 * document. Listed after graphql-js's rules, it still runs before they walk the document: they
 * all walk it together, its root first.
 */
export function operationLimitsRule(limits: OperationLimits): OperationLimitsRule {
  const { maxDepth, maxFields, maxAliases, maxRootFields, maxDefinitions } = limits;
  const cap = Math.max(maxDepth, maxFields, maxAliases, maxRootFields);
  const rule = (context: ValidationContext): ASTVisitor => ({
    Document(document) {
      if (document.definitions.length > maxDefinitions) {
        context.reportError(refusal(`the document holds ${document.definitions.length} operations and fragments; at most ${maxDefinitions} are allowed`, document));
        return null;
      }
      const shape = measureDocument(document, cap);
      let refused = shape.fragmentProblems.length > 0;
      for (const problem of shape.fragmentProblems) context.reportError(refusal(`the operation cannot be measured: ${problem}`, document));
      for (const [operation, { depth, fields, aliases, topFields }] of shape.operations) {
        const errors = [
          depth > maxDepth && `the operation nests ${depth > cap ? `more than ${cap}` : depth} levels deep; at most ${maxDepth} are allowed`,
          fields > maxFields && `the operation selects more than ${maxFields} fields`,
          aliases > maxAliases && `the operation uses more than ${maxAliases} aliases`,
          topFields > maxRootFields && `the operation selects more than ${maxRootFields} root fields`,
        ];
        for (const message of errors) if (message) context.reportError(refusal(message, operation));
        refused ||= errors.some(Boolean);
      }
      // A refused document goes no further, for any rule: in graphql-js's parallel walk, a visitor
      // returning a value other than undefined, false or BREAK replaces the node for all of them, and
      // null removes it. The other rules' walk of 55,000 aliases took 220 ms, three times their
      // parse, to add nothing to a refusal.
      return refused ? null : false;
    },
  });
  return Object.assign(rule, { limits });
}

/**
 * The rule, with the limits it was made from: whoever validates with it parses with their
 * `maxTokens` (a subgraph's WebSocket is handed the rule alone).
 */
export type OperationLimitsRule = ValidationRule & { readonly limits: Readonly<OperationLimits> };

/** Whether a validation rule is the shape rule, whose limits (the token bound) its parser needs too. */
export function isOperationLimitsRule(rule: ValidationRule): rule is OperationLimitsRule {
  return typeof (rule as Partial<OperationLimitsRule>).limits === 'object';
}

/**
 * A client's text parsed within the token bound: past it, graphql-js stops and throws its syntax
 * error ("Document contains more than N tokens"), which every transport answers as
 * GRAPHQL_PARSE_FAILED, as Apollo Server does with the same `parseOptions`.
 */
export function parseWithin(text: string, { maxTokens }: Pick<OperationLimits, 'maxTokens'>): DocumentNode {
  return parse(text, { maxTokens });
}
