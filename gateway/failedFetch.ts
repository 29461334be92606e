import { GraphQLError, Kind, getOperationAST, isNonNullType, parse, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';

/** The response keys a root selection fills and the field behind each, fragments expanded, `__typename` and the like left out. */
function rootKeys(selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, keys = new Map<string, string>(), seen = new Set<string>()): Map<string, string> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      if (!selection.name.value.startsWith('__') && !keys.has(key)) keys.set(key, selection.name.value);
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
  const keys = rootKeys(found.operation.selectionSet, found.fragments);
  if (keys.size === 0) throw error;
  const failure = error as GraphQLError;
  return { errors: [...keys.keys()].map((key) => new GraphQLError(failure.message, { path: [key], extensions: failure.extensions })) };
}

/**
 * The same for the single-fetch shortcut, whose one fetch asks for exactly what the client asked:
 * with the data Apollo's executor would give, each root field `null`, or no data at all when one of
 * them may not be null.
 */
export function failedDirectFetch(error: unknown, fetch: { operation: string; operationName?: string | undefined }, schema: GraphQLSchema): { data: Record<string, null> | null; errors: GraphQLError[] } {
  const { errors } = failedRootFetch(error, { query: fetch.operation, operationName: fetch.operationName, path: [] });
  const found = operationOf(fetch.operation, undefined, fetch.operationName)!;
  const root = found.operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const keys = rootKeys(found.operation.selectionSet, found.fragments);
  const nullable = [...keys.values()].every((name) => {
    const field = root?.getFields()[name];
    return field !== undefined && !isNonNullType(field.type);
  });
  return { data: nullable ? Object.fromEntries([...keys.keys()].map((key) => [key, null])) : null, errors };
}
