import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { valueNestsDeeperThan } from './jsonDepth.ts';

// The custom scalars: served by the subgraphs, and their literals checked by the gateway with the same parsers.

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

/**
 * A value an answer holds is the upstream's, never the caller's input: its failure reads as graphql-js's
 * own scalars' (`Int cannot represent …`), which the subgraphs report as the service's error.
 */
function serializing<T>(name: string, read: (value: unknown) => T): (value: unknown) => T {
  return (value) => {
    try {
      return read(value);
    } catch {
      throw new GraphQLError(`${name} cannot represent value: ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
    }
  };
}

export const DateScalar = new GraphQLScalarType({
  name: 'Date',
  description: 'A calendar date in ISO 8601, such as `2026-11-22`.',
  serialize: serializing('Date', parseIsoDate),
  parseValue: parseIsoDate,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Date must be a string like 2026-01-31', { extensions: { code: 'BAD_USER_INPUT' } });
    return parseIsoDate(ast.value);
  },
});

/** `YYYY-MM-DDTHH:MM:SS.sssZ`: how `toISOString` writes the years 0 to 9999. */
const CANONICAL_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `toISOString` would give the string back unchanged: the canonical form, with a date that
 * exists (a Date rolls 2026-02-30 over to March) and a time of day within bounds.
 */
export function isCanonicalInstant(value: string): boolean {
  if (value.length !== 24 || !CANONICAL_INSTANT.test(value)) return false;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 7);
  const day = digitsAt(value, 8, 10);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return days !== undefined && day >= 1 && day <= days && digitsAt(value, 11, 13) <= 23 && digitsAt(value, 14, 16) <= 59 && digitsAt(value, 17, 19) <= 59;
}

// Not a closure inside the check: tsx, which keeps function names, renamed one with a property
// definition at every instant read, 2 µs each, 40 a `redemptions20`.
function digitsAt(text: string, from: number, to: number): number {
  return Number(text.slice(from, to));
}

function toIsoInstant(value: unknown): string {
  // Most upstream instants are already canonical: a Date and back costs six times the check.
  if (typeof value === 'string' && isCanonicalInstant(value)) return value;
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw new GraphQLError(`DateTime must be an ISO 8601 instant; got ${JSON.stringify(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return date.toISOString();
}

/**
 * An upstream's instant as the canonical ISO 8601 text `DateTime` serialises without complaint, or
 * null when it is not one. For data kept for later (events): a bad field is dropped on the way in,
 * so no reader gets an error for it afterwards.
 */
export function instantOrNull(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  try {
    return toIsoInstant(value);
  } catch {
    return null;
  }
}

/** Upstreams send instants in several shapes; clients always get ISO 8601 in UTC. */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description: 'An instant in ISO 8601 with an offset, such as `2026-11-22T07:18:18.000Z`.',
  serialize: serializing('DateTime', toIsoInstant),
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

/**
 * Deeper than any payload a service documents; writing an answer (JSON.stringify, the gateway's
 * parse and copy) overflows the stack some thousands of levels down, losing the whole request.
 */
export const MAX_JSON_VALUE_DEPTH = 64;

/** An upstream payload whose shape the service does not document, passed through untouched. */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value, passed through as the upstream sent it.',
  serialize: serializing('JSON', (value) => {
    if (valueNestsDeeperThan(value, MAX_JSON_VALUE_DEPTH)) throw new RangeError('nested too deep');
    return value;
  }),
  parseValue: (value) => value,
  parseLiteral: literalValue,
});
