import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildSchema, getVariableValues, parse, type OperationDefinitionNode } from 'graphql';
import { quickVariablesCheck } from '../../lib/quickVariables.ts';
import { DateTimeScalar } from '../../lib/scalars.ts';

const schema = buildSchema(`
  scalar DateTime
  enum Color { RED GREEN }
  input Filter { min: Int }
  type Query { f(id: ID, text: String, count: Int, ratio: Float, on: Boolean, at: DateTime, color: Color, filter: Filter): Int }
`);
// As the gateway's schemas: a custom scalar with a parser of its own.
Object.assign(schema.getType('DateTime')!, { parseValue: DateTimeScalar.parseValue });

const definitionsOf = (variables: string) => (parse(`query Q${variables} { f }`).definitions[0] as OperationDefinitionNode).variableDefinitions ?? [];
const graphqlAccepts = (variables: string, values: Record<string, unknown>) => getVariableValues(schema, definitionsOf(variables), values).errors === undefined;
const quickAccepts = (variables: string, values: Record<string, unknown>) => quickVariablesCheck(schema, definitionsOf(variables))(values);

const named = fc.constantFrom('ID', 'String', 'Int', 'Float', 'Boolean', 'DateTime', 'Color', 'Filter');
/** A variable's type: a named type in up to two lists, each level non-null or not. */
const typeText = fc
  .tuple(named, fc.boolean(), fc.integer({ min: 0, max: 2 }), fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }))
  .map(([name, nonNull, depth, listsNonNull]) => {
    let text = `${name}${nonNull ? '!' : ''}`;
    for (let level = 0; level < depth; level += 1) text = `[${text}]${listsNonNull[level] ? '!' : ''}`;
    return text;
  });
const scalarValue = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.constantFrom(2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 1.5, -0, 1e300, 'RED', '2026-11-27T05:33:45.000Z', true, false, null),
  fc.double({ noNaN: true }),
);
const value = fc.oneof({ arbitrary: scalarValue, weight: 4 }, fc.array(scalarValue, { maxLength: 3 }), fc.array(fc.array(scalarValue, { maxLength: 2 }), { maxLength: 2 }), fc.jsonValue({ maxDepth: 2 }));

describe('the quick check of variables', () => {
  it('accepts only what graphql-js accepts, over generated definitions and values', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(typeText, fc.boolean(), fc.option(value, { nil: undefined })), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        (variables, withDefault) => {
          // A default: null where the type takes it, a value of the type (wrong ones are refused by validation, before this) elsewhere.
          const defaultOf = (type: string) => (!type.endsWith('!') ? ' = null' : type === 'Int!' ? ' = 3' : type === 'Color!' ? ' = RED' : '');
          const text = `(${variables.map(([type], index) => `$v${index}: ${type}${withDefault && index === 0 ? defaultOf(type) : ''}`).join(', ')})`;
          const values: Record<string, unknown> = {};
          variables.forEach(([, present, given], index) => {
            if (present && given !== undefined) values[`v${index}`] = given;
          });
          const quick = quickAccepts(text, values);
          if (quick) {
            accepted += 1;
            expect(graphqlAccepts(text, values)).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
    // Not a check that says no to everything.
    expect(accepted).toBeGreaterThan(100);
  });

  it.each([
    ['($id: ID!)', { id: 'r_001' }],
    ['($id: ID!)', { id: 42 }],
    ['($ids: [ID!]!)', { ids: ['rd_001', 'rd_002'] }],
    ['($ids: [ID!]!)', { ids: 'rd_001' }],
    ['($first: Int, $after: String)', { first: 10 }],
    ['($first: Int, $after: String)', { first: 10, after: null, unused: { any: 'thing' } }],
    ['($on: Boolean!, $ratio: Float)', { on: false, ratio: 0.5 }],
  ])('takes the usual %s %j at once', (variables, values) => {
    expect(quickAccepts(variables, values)).toBe(true);
    expect(graphqlAccepts(variables, values)).toBe(true);
  });

  it.each([
    ['($id: ID!)', {}],
    ['($id: ID!)', { id: null }],
    ['($id: ID!)', { id: 1.5 }],
    ['($ids: [ID!]!)', { ids: ['a', null] }],
    ['($first: Int)', { first: 2 ** 31 }],
    ['($first: Int)', { first: '10' }],
    ['($ratio: Float)', { ratio: '0.5' }],
  ])('leaves %s %j to graphql-js, which refuses it', (variables, values) => {
    expect(quickAccepts(variables, values)).toBe(false);
    expect(graphqlAccepts(variables, values)).toBe(false);
  });

  it.each([
    ['($at: DateTime)', { at: '2026-11-27T05:33:45.000Z' }],
    ['($at: DateTime!)', { at: 1764221625000 }],
    ['($color: Color)', { color: 'RED' }],
    ['($first: Int = 10)', {}],
    ['($first: Int! = 10)', {}],
  ])('takes %s %j, a custom scalar, an enum or a default, by its type’s own parser', (variables, values) => {
    expect(quickAccepts(variables, values)).toBe(true);
    expect(graphqlAccepts(variables, values)).toBe(true);
  });

  it.each([
    ['($at: DateTime)', { at: 'not an instant' }],
    ['($color: Color)', { color: 'BLUE' }],
    ['($color: Color)', { color: 0 }],
    ['($first: Int! = 10)', { first: null }],
  ])('leaves %s %j to graphql-js, which refuses it', (variables, values) => {
    expect(quickAccepts(variables, values)).toBe(false);
    expect(graphqlAccepts(variables, values)).toBe(false);
  });

  it('answers as graphql-js does for a list of 100,000 ids, one nested 10,000 deep, and prototype keys', () => {
    const many = Array.from({ length: 100_000 }, (_, index) => `rd_${index}`);
    expect(quickAccepts('($ids: [ID!]!)', { ids: many })).toBe(true);
    expect(graphqlAccepts('($ids: [ID!]!)', { ids: many })).toBe(true);
    const deep = JSON.parse(`{"ids":${'['.repeat(10_000)}"a"${']'.repeat(10_000)}}`) as Record<string, unknown>;
    expect(quickAccepts('($ids: [ID!]!)', deep)).toBe(false);
    expect(graphqlAccepts('($ids: [ID!]!)', deep)).toBe(false);
    // A variable named by an own `__proto__` key is read as any other; an inherited one is not given.
    const own = JSON.parse('{"__proto__":"x","id":"r1"}') as Record<string, unknown>;
    expect(quickAccepts('($id: ID!)', own)).toBe(true);
    expect(quickAccepts('($toString: ID!)', {})).toBe(false);
    expect(graphqlAccepts('($toString: ID!)', {})).toBe(false);
  });

  it('leaves lists nested deeper than real operations nest them to graphql-js, however deep the definition', () => {
    const nested = (depth: number) => {
      let value: unknown = 'a';
      for (let level = 0; level < depth; level += 1) value = [value];
      return { v: value };
    };
    const typeOf = (depth: number) => `($v: ${'['.repeat(depth)}ID${']'.repeat(depth)})`;
    expect(quickAccepts(typeOf(8), nested(8))).toBe(true);
    expect(quickAccepts(typeOf(9), nested(9))).toBe(false);
    expect(graphqlAccepts(typeOf(9), nested(9))).toBe(true);
    // Some 6 KB of text, near where graphql-js's own coercion runs out of stack: left to it.
    expect(quickAccepts(typeOf(3_000), nested(3_000))).toBe(false);
  });

  it('leaves an input object to graphql-js', () => {
    expect(quickAccepts('($filter: Filter)', { filter: { min: 1 } })).toBe(false);
    expect(graphqlAccepts('($filter: Filter)', { filter: { min: 1 } })).toBe(true);
  });
});
