import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

export interface OperationLimits {
  /** Deepest field nesting accepted. @default 12 */
  maxDepth: number;
  /** Most fields selected in one operation, fragments expanded. @default 1000 */
  maxFields: number;
}

/**
 * Refuses operations too deep or too wide before they are planned: a single request cannot make
 * the gateway fan out without bound. Runs as a validation rule, so HTTP, WebSocket and SSE share it.
 */
export function operationLimitsRule({ maxDepth, maxFields }: OperationLimits) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);

    function measure(selectionSet: SelectionSetNode, depth: number, seen: Set<string>): { depth: number; fields: number } {
      let deepest = depth;
      let fields = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          fields += 1;
          if (selection.selectionSet) {
            const inner = measure(selection.selectionSet, depth + 1, seen);
            deepest = Math.max(deepest, inner.depth);
            fields += inner.fields;
          }
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          const inner = measure(selection.selectionSet, depth, seen);
          deepest = Math.max(deepest, inner.depth);
          fields += inner.fields;
        } else {
          const fragment = fragments.get(selection.name.value);
          // A cycle is reported by GraphQL's own rules; do not loop on it here.
          if (!fragment || seen.has(fragment.name.value)) continue;
          const inner = measure(fragment.selectionSet, depth, new Set([...seen, fragment.name.value]));
          deepest = Math.max(deepest, inner.depth);
          fields += inner.fields;
        }
        if (fields > maxFields) break;
      }
      return { depth: deepest, fields };
    }

    return {
      OperationDefinition(operation) {
        const { depth, fields } = measure(operation.selectionSet, 1, new Set());
        if (depth > maxDepth) {
          context.reportError(new GraphQLError(`the operation nests ${depth} levels deep; at most ${maxDepth} are allowed`, { nodes: [operation], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        }
        if (fields > maxFields) {
          context.reportError(new GraphQLError(`the operation selects more than ${maxFields} fields`, { nodes: [operation], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        }
      },
    };
  };
}
