import { GraphQLError, getNamedType, getNullableType, isListType, isScalarType, type ASTVisitor, type GraphQLScalarType, type ValidationContext, type ValueNode } from 'graphql';
import { DateScalar, DateTimeScalar } from '../lib/scalars.ts';

/** The custom scalars whose literals the gateway can check as the owning subgraph would. */
const CHECKED: readonly GraphQLScalarType[] = [DateScalar, DateTimeScalar];

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
