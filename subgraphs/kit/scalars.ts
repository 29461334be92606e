import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseIsoDate(value: unknown): string {
  if (typeof value !== 'string' || !ISO_DATE.test(value)) {
    throw new GraphQLError(`Date must be a calendar date like 2026-01-31; got ${JSON.stringify(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw new GraphQLError(`Date ${value} does not exist`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return value;
}

export const DateScalar = new GraphQLScalarType({
  name: 'Date',
  description: 'A calendar date in ISO 8601, such as `2026-11-22`.',
  serialize: (value) => parseIsoDate(value),
  parseValue: parseIsoDate,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Date must be a string like 2026-01-31', { extensions: { code: 'BAD_USER_INPUT' } });
    return parseIsoDate(ast.value);
  },
});

function toIsoInstant(value: unknown): string {
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw new GraphQLError(`DateTime must be an ISO 8601 instant; got ${JSON.stringify(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return date.toISOString();
}

/** Upstreams send instants in several shapes; clients always get ISO 8601 in UTC. */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description: 'An instant in ISO 8601 with an offset, such as `2026-11-22T07:18:18.000Z`.',
  serialize: toIsoInstant,
  parseValue: toIsoInstant,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return toIsoInstant(ast.value);
  },
});

function literalValue(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
    case Kind.ENUM:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.LIST:
      return ast.values.map(literalValue);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((field) => [field.name.value, literalValue(field.value)]));
    default:
      return null;
  }
}

/** An upstream payload whose shape the service does not document, passed through untouched. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value, passed through as the upstream sent it.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literalValue,
});
