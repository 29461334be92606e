import { execute, GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { wrapExecutor, type GatewayInterface } from './wrapExecutor.ts';

/** Whether every root field, through fragments, is `__schema`, `__type` or `__typename`: nothing a subgraph holds. */
function onlyMetaFields(selectionSet: SelectionSetNode, document: DocumentNode, entered = new Set<string>()): boolean {
  return selectionSet.selections.every((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__');
    if (selection.kind === Kind.INLINE_FRAGMENT) return onlyMetaFields(selection.selectionSet, document, entered);
    const name = selection.name.value;
    if (entered.has(name)) return true;
    entered.add(name);
    // Looked up only when a root spread is met: most operations answer at their first field.
    const fragment = document.definitions.find((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === name);
    return fragment !== undefined && onlyMetaFields(fragment.selectionSet, document, entered);
  });
}

/**
 * Introspection the gateway answers itself, from the API schema clients see. Apollo's planner
 * models the introspection types of an older graphql-js: the `isOneOf` that graphql-js 16.9 added to
 * `__Type`, which GraphiQL and graphql-js's own `getIntrospectionQuery({ oneOf: true })` ask for,
 * passed validation and then threw in planning, a 500. An operation of introspection alone never
 * reaches the planner now; one that mixes it with data and asks what the planner cannot model is
 * refused as the invalid operation it is to the planner, `GRAPHQL_VALIDATION_FAILED`.
 */
export function withIntrospection(gateway: GatewayInterface, schema: GraphQLSchema): GatewayInterface {
  return wrapExecutor(gateway, (inner) => async (requestContext) => {
    const { document, operation } = requestContext;
    if (operation?.operation === 'query' && onlyMetaFields(operation.selectionSet, document)) {
      return execute({ schema, document, operationName: requestContext.operationName, variableValues: requestContext.request.variables }) as Awaited<ReturnType<typeof inner>>;
    }
    try {
      return await inner(requestContext);
    } catch (error) {
      if (error instanceof GraphQLError && error.extensions.code === 'INVALID_GRAPHQL') {
        return { errors: [new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })] };
      }
      throw error;
    }
  });
}
