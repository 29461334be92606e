import { describe, expect, it } from 'vitest';
import { buildSchema, parse, print } from 'graphql';
import { applyRemovals, restrictOperation } from '../../gateway/auth/fieldAccess.ts';
import { readAccessRequirements } from '../../gateway/auth/requirements.ts';
import { createFieldAccess, DECISION_CACHE_BYTES } from '../../gateway/auth/access.ts';
import type { Principal } from '../../gateway/auth/principal.ts';

const sdl = `
  directive @requiresScopes(scopes: [[String!]!]!) on FIELD_DEFINITION | OBJECT
  directive @authenticated on FIELD_DEFINITION | OBJECT
  type Query { public: String, team: Team, secret: String @requiresScopes(scopes: [["a:read"], ["b:read"]]), members: [Member!]! }
  type Team { name: String, budget: Int! @requiresScopes(scopes: [["finance"]]) }
  type Member { id: ID!, email: String @authenticated, salary: Salary }
  type Salary @requiresScopes(scopes: [["hr"]]) { amount: Int }
`;
const schema = buildSchema(sdl);
const requirements = readAccessRequirements(sdl);
const caller = (...scopes: string[]): Principal => ({ id: 'p', scopes: new Set(scopes), via: 'jwt' });

describe('field access', () => {
  it('removes nothing, and costs no new document, when the caller meets every requirement', () => {
    expect(restrictOperation(schema, requirements, parse('{ public secret team { budget } }'), undefined, caller('b:read', 'finance'))).toBeUndefined();
  });

  it('removes a denied field, its unused variables, and inlines fragments', () => {
    const document = parse('query Q($v: String) { public ...F } fragment F on Query { secret team { name } }');
    const restricted = restrictOperation(schema, requirements, document, 'Q', caller())!;
    expect(print(restricted.document)).not.toContain('secret');
    expect(print(restricted.document)).not.toContain('fragment');
    expect(restricted.removals).toEqual([{ path: [{ key: 'secret', nullable: true }], field: 'Query.secret', code: 'FORBIDDEN' }]);
    expect(restricted.document.definitions[0]).toMatchObject({ variableDefinitions: [] });
  });

  it('says UNAUTHENTICATED to nobody and FORBIDDEN to a caller without the scope', () => {
    const document = parse('{ members { email } }');
    expect(restrictOperation(schema, requirements, document, undefined, undefined)!.removals[0]!.code).toBe('UNAUTHENTICATED');
    expect(restrictOperation(schema, requirements, document, undefined, caller())).toBeUndefined();
  });

  it('guards a field by the type it returns, and nulls the nearest nullable ancestor of a non-null field', () => {
    const restricted = restrictOperation(schema, requirements, parse('{ members { id salary { amount } } team { name budget } }'), undefined, caller())!;
    const { data, errors } = applyRemovals({ members: [{ id: '1' }, { id: '2' }], team: { name: 'core' } }, restricted.removals);
    expect(data).toEqual({ members: [{ id: '1', salary: null }, { id: '2', salary: null }], team: null });
    expect(errors.map((error) => [error.path, error.extensions.code])).toEqual([
      [['members', 'salary'], 'FORBIDDEN'],
      [['team', 'budget'], 'FORBIDDEN'],
    ]);
  });

  it('leaves out, without a null or an error, a denied field the client’s @skip or @include left out, literal or by variable', () => {
    const document = parse(
      'query ($hide: Boolean!, $show: Boolean = false) { public secret @skip(if: true) a: secret @include(if: $show) b: secret @skip(if: $hide) team @include(if: $show) { budget } ... @skip(if: $hide) { c: secret } d: secret }',
    );
    const restricted = restrictOperation(schema, requirements, document, undefined, caller())!;
    const keys = (variables: Record<string, unknown>) => {
      const { data, errors } = applyRemovals({ public: 'p' }, restricted.removals, variables);
      return { data, paths: errors.map((error) => error.path!.join('.')) };
    };
    // `team` is nulled, not only its non-null budget, where it is in the answer at all.
    expect(keys({ hide: true })).toEqual({ data: { public: 'p', d: null }, paths: ['d'] });
    expect(keys({ hide: false, show: true })).toEqual({ data: { public: 'p', a: null, b: null, team: null, c: null, d: null }, paths: ['a', 'b', 'team.budget', 'c', 'd'] });
    // Without variables (a defaulted one absent), each condition is read as graphql-js reads it.
    expect(keys({ hide: false })).toEqual({ data: { public: 'p', b: null, c: null, d: null }, paths: ['b', 'c', 'd'] });
  });

  it('marks an operation with nothing left as empty, answered without planning', () => {
    const restricted = restrictOperation(schema, requirements, parse('{ secret }'), undefined, caller())!;
    expect(restricted.empty).toBe(true);
    expect(applyRemovals({}, restricted.removals).data).toEqual({ secret: null });
  });
});

describe('the scope check of a text the fast paths serve', () => {
  it('holds its decisions within their byte bound however large the texts, and parses none past the token bound', () => {
    const access = createFieldAccess({ schema, requirements, maxTokens: 20_000 });
    // 60 distinct texts of about 570 KB each (1,000 entries allowed): 68 MB of keys had they all been kept.
    const padding = ' '.repeat(570_000);
    for (let index = 0; index < 60; index += 1) expect(access.servesWhole(`{ public${padding}}# ${index}`, undefined, caller())).toBe(true);
    expect(access.cachedBytes).toBeGreaterThan(0);
    expect(access.cachedBytes).toBeLessThanOrEqual(DECISION_CACHE_BYTES);
    // Past the token bound the text does not parse here: Apollo Server, which parses with the same bound, refuses it.
    expect(access.servesWhole(`{ ${'public '.repeat(20_001)}}`, undefined, caller())).toBe(false);
    expect(access.servesWhole(`{ ${'public '.repeat(100)}}`, undefined, caller())).toBe(true);
  });
});
