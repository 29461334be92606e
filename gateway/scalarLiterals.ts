import { GraphQLError, getNamedType, getNullableType, isListType, isScalarType, type ASTVisitor, type GraphQLScalarType, type GraphQLSchema, type ValidationContext, type ValueNode } from 'graphql';
import { DateScalar, DateTimeScalar } from '../lib/scalars.ts';

/** The custom scalars whose values the gateway can check as the owning subgraph would. */
const CHECKED: readonly GraphQLScalarType[] = [DateScalar, DateTimeScalar];

/**
 * Gives a schema's checked scalars the owning subgraph's parser for variables, in place, and
 * returns the schema. The API schemas the gateway builds from the supergraph leave custom scalars
 * opaque, so a `Date` variable of `"2026-13-45"` passed every variable check and was refused only
 * by the subgraph, after the gateway had called it. With this, everything that coerces variables
 * against such a schema (Apollo Gateway's own check, the one-fetch path, the pass-through,
 * subscriptions) refuses it as `BAD_USER_INPUT` naming the argument, before any subgraph call.
 * Only `parseValue` is set: literals are the validation rule's below (else reported twice), and
 * the schema is one the gateway built for itself, never one shared with a subgraph.
 */
export function withScalarParsers<Schema extends GraphQLSchema>(schema: Schema, scalars: readonly GraphQLScalarType[] = CHECKED): Schema {
  for (const scalar of scalars) {
    const type = schema.getType(scalar.name);
    if (type && isScalarType(type)) type.parseValue = scalar.parseValue;
  }
  return schema;
}

/**
 * Custom scalars are opaque in the supergraph, so a bad `Date` literal would pass the gateway's
 * validation, reach the subgraph, and come back as a failed field beside `data: null`. The GraphQL
 * spec makes a literal of the wrong value a validation error ("Values of Correct Type"): this rule
 * reports it before planning, with no `data`, on every transport; the one formatError words it as
 * `BAD_USER_INPUT` naming the argument, as it does a bad enum literal.
 */
export function scalarLiteralsRule(scalars: readonly GraphQLScalarType[] = CHECKED) {
  const byName = new Map(scalars.map((scalar) => [scalar.name, scalar]));
  return (context: ValidationContext): ASTVisitor => {
    const check = (node: ValueNode) => {
      const type = context.getInputType();
      const named = type ? getNamedType(type) : undefined;
      const scalar = named && isScalarType(named) ? byName.get(named.name) : undefined;
      if (!scalar) return;
      try {
        scalar.parseLiteral(node, undefined);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        context.reportError(new GraphQLError(message, { nodes: [node], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
      }
    };
    // A list literal in a list position is checked item by item, as each item is entered.
    const checkList = (node: ValueNode) => {
      const type = context.getInputType();
      if (!type || !isListType(getNullableType(type))) check(node);
    };
    return { StringValue: check, IntValue: check, FloatValue: check, BooleanValue: check, EnumValue: check, ObjectValue: check, ListValue: checkList };
  };
}
