import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

export interface OperationLimits {
  /** Deepest field nesting accepted. @default 12 */
  maxDepth: number;
  /** Most fields selected in one operation, fragments expanded. @default 1000 */
  maxFields: number;
  /** Most aliased fields in one operation, fragments expanded. @default 100 */
  maxAliases: number;
  /** Most fields selected at the root of one operation, fragments expanded. @default 50 */
  maxRootFields: number;
}

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
 * Refuses operations too deep, too wide, with too many aliases or root fields before they are
 * planned: a single request cannot make the gateway fan out without bound. Runs as a validation
 * rule, so HTTP, WebSocket and SSE share it; its cost is linear in the document.
 */
export function operationLimitsRule({ maxDepth, maxFields, maxAliases, maxRootFields }: OperationLimits) {
  const cap = Math.max(maxDepth, maxFields, maxAliases, maxRootFields);
  return (context: ValidationContext): ASTVisitor => ({
    Document(document) {
      const shape = measureDocument(document, cap);
      for (const problem of shape.fragmentProblems) context.reportError(refusal(`the operation cannot be measured: ${problem}`, document));
      for (const [operation, { depth, fields, aliases, topFields }] of shape.operations) {
        if (depth > maxDepth) context.reportError(refusal(`the operation nests ${depth > cap ? `more than ${cap}` : depth} levels deep; at most ${maxDepth} are allowed`, operation));
        if (fields > maxFields) context.reportError(refusal(`the operation selects more than ${maxFields} fields`, operation));
        if (aliases > maxAliases) context.reportError(refusal(`the operation uses more than ${maxAliases} aliases`, operation));
        if (topFields > maxRootFields) context.reportError(refusal(`the operation selects more than ${maxRootFields} root fields`, operation));
      }
      return false;
    },
  });
}
