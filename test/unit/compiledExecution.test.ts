import type { ServerResponse } from 'node:http';
import { GraphQLError, execute, parse, getOperationAST, type ExecutionResult } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { describe, expect, it } from 'vitest';
import { compiledExecution, type Executor } from '../../subgraphs/kit/compiledExecution.ts';
import { DATA_ONLY_HEADER } from '../../lib/dataOnlyAnswers.ts';
import { DateScalar } from '../../lib/scalars.ts';

const typeDefs = parse(`
  scalar Date
  type Query {
    users(since: Date, first: Int): [User!]!
    user(id: ID!): User
    broken: String
    required: String!
  }
  type Mutation { rename(id: ID!, name: String!): User }
  type User @key(fields: "id") { id: ID! name: String tags: [String!]! manager: User since: Date }
`);

const people = Array.from({ length: 50 }, (_, index) => ({ id: `u${index}`, name: index % 7 === 0 ? null : `Usér ${index}`, tags: ['a', 'b'], since: '2026-11-01' }));
const calls: string[] = [];
const schema = buildSubgraphSchema({
  typeDefs,
  resolvers: {
    Date: DateScalar,
    Query: {
      users: (_parent: unknown, { first }: { first?: number }) => people.slice(0, first ?? people.length),
      user: async (_parent: unknown, { id }: { id: string }) => people.find((person) => person.id === id) ?? null,
      broken: () => {
        calls.push('broken');
        throw new GraphQLError('the upstream refused', { extensions: { code: 'FORBIDDEN', service: 'test', status: 403 } });
      },
      required: () => null,
    },
    Mutation: {
      rename: (_parent: unknown, { id, name }: { id: string; name: string }) => {
        calls.push(`rename ${id}`);
        return { ...people.find((person) => person.id === id)!, name };
      },
    },
    User: {
      manager: (user: { id: string }) => (user.id === 'u1' ? people[0] : null),
      __resolveReference: (reference: { id: string }) => people.find((person) => person.id === reference.id) ?? null,
    },
  } as never,
});

/** What Apollo Server hands an executor, for one request. */
function requestFor(query: string, variables: Record<string, unknown> = {}, operationName: string | null = null): Parameters<Executor>[0] {
  const document = parse(query);
  return { document, operation: getOperationAST(document, operationName), operationName, queryHash: `${query}`, request: { query, variables, ...(operationName ? { operationName } : {}) }, context: {} } as unknown as Parameters<Executor>[0];
}

const interpreted = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
  execute({ schema, document: parse(query), variableValues: variables, operationName, contextValue: {} }) as Promise<ExecutionResult>;

/** Results compared as a client receives them: JSON. */
const asJson = (result: ExecutionResult) => JSON.parse(JSON.stringify(result)) as unknown;

describe('compiled execution of a subgraph’s queries', () => {
  const cases: [string, string, Record<string, unknown>?][] = [
    ['a list of objects with nested fields and nulls', '{ users { id name tags manager { id name } } }'],
    ['variables, aliases and fragments', 'query ($n: Int, $since: Date) { top: users(first: $n, since: $since) { ...who } } fragment who on User { key: id since }', { n: 3, since: '2026-11-02' }],
    ['an async lookup that finds nothing', '{ user(id: "nobody") { id } }'],
    ['a resolver error with its typed extensions', '{ broken users(first: 1) { id } }'],
    ['null in a non-null field, propagated to the parent', '{ broken required }'],
    ['entities resolved by reference', '{ _entities(representations: [{ __typename: "User", id: "u2" }]) { ... on User { id name } } }'],
    ['skip and include', 'query ($x: Boolean!) { users(first: 2) { id name @include(if: $x) tags @skip(if: $x) } }', { x: false }],
  ];

  it.each(cases)('answers %s exactly as graphql-js does', async (_name, query, variables = {}) => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    const compiled = await executor!(requestFor(query, variables));
    expect(asJson(compiled)).toEqual(asJson(await interpreted(query, variables)));
    expect(host.compiledOperations).toBe(1);
  });

  it('compiles an operation once and reuses it', async () => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    for (const first of [1, 2, 3]) {
      const result = await executor!(requestFor('query ($first: Int) { users(first: $first) { id } }', { first }));
      expect((result.data as { users: unknown[] }).users).toHaveLength(first);
    }
    expect(host.compiledOperations).toBe(1);
  });

  it('refuses a bad variable with graphql-js’s own error, which Apollo turns into BAD_USER_INPUT', async () => {
    const query = 'query ($since: Date, $first: Int) { users(since: $since, first: $first) { id } }';
    for (const variables of [{ since: '2026-02-30' }, { first: 'ten' }]) {
      const { executor } = await compiledExecution(schema).load({ apollo: {} });
      const result = await executor!(requestFor(query, variables));
      expect(result.data).toBeUndefined();
      expect(asJson(result)).toEqual(asJson(await interpreted(query, variables)));
    }
  });

  it('runs mutations and unresolved operations on graphql-js, uncompiled', async () => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    calls.length = 0;
    const renamed = await executor!(requestFor('mutation { first: rename(id: "u1", name: "A") { name } second: rename(id: "u2", name: "B") { name } }'));
    expect(renamed).toEqual({ data: { first: { name: 'A' }, second: { name: 'B' } } });
    expect(calls).toEqual(['rename u1', 'rename u2']);
    const ambiguous = 'query A { users { id } } query B { broken }';
    expect(asJson(await executor!(requestFor(ambiguous)))).toEqual(asJson(await interpreted(ambiguous)));
    expect(host.compiledOperations).toBe(0);
  });

  it('keeps at most cacheSize compiled operations', async () => {
    const host = compiledExecution(schema, { cacheSize: 2 });
    const { executor } = await host.load({ apollo: {} });
    for (const field of ['id', 'name', 'tags']) await executor!(requestFor(`{ users(first: 1) { ${field} } }`));
    expect(host.compiledOperations).toBe(2);
  });
});

/** What a request handler wrote, standing in for node's ServerResponse. */
function recorder() {
  const written: { status?: number; headers?: Record<string, string | number>; body?: string } = {};
  const res = {
    writeHead(status: number, headers: Record<string, string | number>) {
      Object.assign(written, { status, headers });
      return res;
    },
    end(body: string | Buffer) {
      written.body = String(body);
      return res;
    },
  };
  return { res: res as unknown as ServerResponse, written };
}

describe('repeats of a compiled query, without Apollo Server', () => {
  const query = 'query Top($n: Int) { users(first: $n) { id name } }';

  it('serves nothing it has not run for Apollo Server first, then answers repeats as Apollo Server would', async () => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    const body = { query, operationName: 'Top', variables: { n: 2 } };
    const unknown = recorder();
    expect(await host.serve(body, () => ({}), undefined, unknown.res)).toEqual({ served: false });
    expect(unknown.written).toEqual({});

    await executor!(requestFor(query, { n: 1 }, 'Top'));
    const repeat = recorder();
    expect(await host.serve(body, () => ({}), undefined, repeat.res)).toEqual({ served: true });
    expect(repeat.written.status).toBe(200);
    // Written whole by the subgraph, nothing but `data`: the gateway need not search it for extensions.
    expect(repeat.written.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', [DATA_ONLY_HEADER]: '1' });
    expect(repeat.written.body).toBe(`${JSON.stringify(await interpreted(query, { n: 2 }, 'Top'))}\n`);
    // Its length in bytes, not in characters: the names hold an é.
    expect(repeat.written.headers!['content-length']).toBe(Buffer.byteLength(repeat.written.body!));
    expect(repeat.written.body).toContain('é');
    // The operation name is part of what was asked.
    expect(await host.serve({ query, variables: { n: 2 } }, () => ({}), undefined, recorder().res)).toEqual({ served: false });
  });

  it('leaves an answer with errors to Apollo Server, already computed, so resolvers run once', async () => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    const failing = '{ broken users(first: 1) { id } }';
    await executor!(requestFor(failing));
    calls.length = 0;
    const written = recorder();
    const outcome = await host.serve({ query: failing }, () => ({ caller: 'a' }), undefined, written.res);
    expect(outcome.served).toBe(false);
    expect(written.written).toEqual({});
    expect(calls).toEqual(['broken']);
    const context = (outcome as { context?: object }).context!;
    expect(context).toMatchObject({ caller: 'a' });
    // Apollo Server copies the context it is given; the result travels with the copy.
    const copy = Object.assign(Object.create(Object.getPrototypeOf(context) as object) as object, context);
    const result = await executor!({ ...requestFor(failing), context: copy } as Parameters<Executor>[0]);
    expect(asJson(result)).toEqual(asJson(await interpreted(failing)));
    expect(calls).toEqual(['broken', 'broken']);
  });

  it('does not remember an operation padded past 16 KiB', async () => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    const padded = `{ users(first: 1) { id } }\n# ${'x'.repeat(16 * 1024)}`;
    await executor!(requestFor(padded));
    expect(await host.serve({ query: padded }, () => ({}), undefined, recorder().res)).toEqual({ served: false });
  });

  it('leaves bad variables, unknown shapes and refused media types to Apollo Server, running nothing', async () => {
    const host = compiledExecution(schema);
    const { executor } = await host.load({ apollo: {} });
    await executor!(requestFor('query ($since: Date) { users(since: $since) { id } }', {}));
    await executor!(requestFor('{ broken }'));
    calls.length = 0;
    const contexts: unknown[] = [];
    const makeContext = () => {
      const context = {};
      contexts.push(context);
      return context;
    };
    for (const [body, accept] of [
      [{ query: 'query ($since: Date) { users(since: $since) { id } }', variables: { since: 'yesterday' } }, undefined],
      [{ query: '{ broken }', extensions: { persistedQuery: { version: 1 } } }, undefined],
      [{ query: '{ broken }', variables: 'n=1' }, undefined],
      [{ query: '{ broken }' }, 'text/html'],
    ] as const) {
      const written = recorder();
      expect(await host.serve(body, makeContext, accept, written.res)).toEqual({ served: false });
      expect(written.written).toEqual({});
    }
    expect(contexts).toEqual([]);
    expect(calls).toEqual([]);
  });
});
