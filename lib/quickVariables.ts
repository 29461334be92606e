import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString, isListType, isNonNullType, isScalarType, typeFromAST, type GraphQLInputType, type GraphQLSchema, type VariableDefinitionNode } from 'graphql';

/** Whether a value, not null, is one graphql-js takes as it is for the type. */
type Takes = (value: unknown) => boolean;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

// By the built-in's own parser: a schema that gave a scalar of these names another one is not read here.
const BUILT_IN: ReadonlyMap<unknown, Takes> = new Map<unknown, Takes>([
  [GraphQLID.parseValue, (value) => typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))],
  [GraphQLString.parseValue, (value) => typeof value === 'string'],
  [GraphQLInt.parseValue, (value) => typeof value === 'number' && Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX],
  [GraphQLFloat.parseValue, (value) => typeof value === 'number' && Number.isFinite(value)],
  [GraphQLBoolean.parseValue, (value) => typeof value === 'boolean'],
]);

/** What a value of `type` must be, null included; undefined for a type this does not read (enums, custom scalars, input objects). */
function takesOf(type: GraphQLInputType): ((value: unknown) => boolean) | undefined {
  if (isNonNullType(type)) {
    const inner = takesOf(type.ofType);
    return inner && ((value) => value !== null && value !== undefined && inner(value));
  }
  if (isListType(type)) {
    const item = takesOf(type.ofType);
    // graphql-js takes a single value for a list of one.
    return item && ((value) => value === null || (Array.isArray(value) ? value.every(item) : item(value)));
  }
  const scalar = isScalarType(type) ? BUILT_IN.get(type.parseValue) : undefined;
  return scalar && ((value) => value === null || scalar(value));
}

/**
 * For one operation's variable definitions, a check that answers `true` only where graphql-js's
 * `getVariableValues` would report no error: every variable of the built-in scalars, in lists or
 * not, present where required, of the right kind. `false` says nothing: graphql-js decides, and
 * words any error. Operations with a default value or a variable of another type always get `false`.
 *
 * Checking variables as Apollo Server would is on every repeat of the fast paths, and graphql-js's
 * general coercion cost more than the rest of the gateway's work on a one-id read.
 */
export function quickVariablesCheck(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[]): (variables: Record<string, unknown>) => boolean {
  const checks: { name: string; required: boolean; takes: (value: unknown) => boolean }[] = [];
  for (const definition of definitions) {
    const type = typeFromAST(schema, definition.type);
    const takes = definition.defaultValue || !type ? undefined : takesOf(type as GraphQLInputType);
    if (!takes) return NEVER;
    checks.push({ name: definition.variable.name.value, required: isNonNullType(type), takes });
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
