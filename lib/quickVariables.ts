import { isLeafType, isListType, isNonNullType, typeFromAST, type GraphQLInputType, type GraphQLLeafType, type GraphQLSchema, type VariableDefinitionNode } from 'graphql';

/** As graphql-js takes a leaf's value: its type's `parseValue` neither throws nor gives undefined. */
function leafTakes(type: GraphQLLeafType): (value: unknown) => boolean {
  return (value) => {
    try {
      return type.parseValue(value) !== undefined;
    } catch {
      return false;
    }
  };
}

/**
 * Lists nested deeper than this go to graphql-js. Real operations nest two or three; a definition
 * nested thousands deep (a few kilobytes of text) would make a check as deep, whose recursion
 * graphql-js's own coercion answers differently near the stack's end.
 */
const MAX_LIST_DEPTH = 8;

/** What a value of `type` must be, null included; undefined for a type this does not read (input objects, lists too deep). */
function takesOf(type: GraphQLInputType, lists = 0): ((value: unknown) => boolean) | undefined {
  if (isNonNullType(type)) {
    const inner = takesOf(type.ofType, lists);
    return inner && ((value) => value !== null && value !== undefined && inner(value));
  }
  if (isListType(type)) {
    const item = lists < MAX_LIST_DEPTH ? takesOf(type.ofType, lists + 1) : undefined;
    // graphql-js takes a single value for a list of one.
    return item && ((value) => value === null || (Array.isArray(value) ? value.every(item) : item(value)));
  }
  if (!isLeafType(type)) return undefined;
  const takes = leafTakes(type);
  return (value) => value === null || (value !== undefined && takes(value));
}

/**
 * For one operation's variable definitions, a check that answers `true` only where graphql-js's
 * `getVariableValues` would report no error: the same rules for null, lists and required
 * variables, each leaf value given to its type's own `parseValue`. `false` says nothing:
 * graphql-js decides, and words any error. Operations with an input object variable, or lists
 * nested deeper than `MAX_LIST_DEPTH`, always get `false`.
 *
 * Checking variables as Apollo Server would is on every repeat of the fast paths, and graphql-js's
 * general coercion (a path and an error callback for every value) cost more than the rest of the
 * gateway's work on a one-id read.
 */
export function quickVariablesCheck(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[]): (variables: Record<string, unknown>) => boolean {
  const checks: { name: string; required: boolean; takes: (value: unknown) => boolean }[] = [];
  for (const definition of definitions) {
    const type = typeFromAST(schema, definition.type);
    const takes = type && takesOf(type as GraphQLInputType);
    if (!takes) return NEVER;
    // A default, checked when the operation was validated, stands in for a variable not given.
    checks.push({ name: definition.variable.name.value, required: isNonNullType(type) && !definition.defaultValue, takes });
  }
  return (variables) => {
    for (const { name, required, takes } of checks) {
      if (!Object.hasOwn(variables, name)) {
        if (required) return false;
        continue;
      }
      if (!takes(variables[name])) return false;
    }
    return true;
  };
}

const NEVER = () => false;
