import { GraphQLError, Kind, getOperationAST, parse, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

/** The response keys a root selection fills, fragments expanded, `__typename` and the like left out. */
function rootKeys(selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, keys = new Set<string>(), seen = new Set<string>()): Set<string> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) keys.add(selection.alias?.value ?? selection.name.value);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      rootKeys(selection.selectionSet, fragments, keys, seen);
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment) rootKeys(fragment.selectionSet, fragments, keys, seen);
    }
  }
  return keys;
}

function operationOf(query: string, document: DocumentNode | undefined, operationName: string | undefined) {
  try {
    const parsed = document ?? parse(query);
    const fragments = new Map(parsed.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((definition) => [definition.name.value, definition]));
    const operation = getOperationAST(parsed, operationName);
    return operation ? { operation, fragments } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A root fetch that failed as a whole (the subgraph unreachable, or refused by its breaker), as the
 * subgraph would have reported it: the error at the path of each root field it was asked for, so
 * those fields are `null` with their error and the rest of the operation keeps its data. Apollo
 * reports such a failure without a path. Entity fetches, and what is not a GraphQL error, are
 * thrown as they came.
 */
export function failedRootFetch(error: unknown, fetch: { query: string; operationName?: string | undefined; document?: DocumentNode | undefined; path?: readonly (string | number)[] | undefined }): { errors: GraphQLError[] } {
  const found = error instanceof GraphQLError && fetch.path?.length === 0 ? operationOf(fetch.query, fetch.document, fetch.operationName) : undefined;
  if (!found || found.operation.operation === 'subscription') throw error;
  const keys = [...rootKeys(found.operation.selectionSet, found.fragments)];
  if (keys.length === 0) throw error;
  const failure = error as GraphQLError;
  return { errors: keys.map((key) => new GraphQLError(failure.message, { path: [key], extensions: failure.extensions })) };
}
