import { execute, GraphQLError, Kind, type FragmentDefinitionNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { wrapExecutor, type GatewayInterface } from './wrapExecutor.ts';

/** Whether every root field, through fragments, is `__schema`, `__type` or `__typename`: nothing a subgraph holds. */
function onlyMetaFields(selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, entered = new Set<string>()): boolean {
  return selectionSet.selections.every((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__');
    if (selection.kind === Kind.INLINE_FRAGMENT) return onlyMetaFields(selection.selectionSet, fragments, entered);
    const name = selection.name.value;
    if (entered.has(name)) return true;
    entered.add(name);
    const fragment = fragments.get(name);
    return fragment !== undefined && onlyMetaFields(fragment.selectionSet, fragments, entered);
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
    if (operation) {
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      if (operation.operation === 'query' && onlyMetaFields(operation.selectionSet, fragments)) {
        return execute({ schema, document, operationName: requestContext.operationName, variableValues: requestContext.request.variables }) as Awaited<ReturnType<typeof inner>>;
      }
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
