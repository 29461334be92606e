import { describe, expect, it } from 'vitest';
import { buildClientSchema, getIntrospectionQuery, Lexer, parse, Source, TokenKind, type IntrospectionQuery } from 'graphql';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { GATEWAY_OPERATION_LIMITS, measureDocument } from '../../../lib/operationShapeLimits.ts';
import { argumentsAtGatewayLimits, manyOperations, queryAtGatewayLimits, subscriptionAtGatewayLimits, TOKEN_PROBES } from '../../support/operationsAtLimits.ts';
import { startTestStack } from '../../support/stack.ts';
import { subscribeSse, subscribeWs } from '../../support/subscribers.ts';

const t = await startTestStack();
const emulator = t.emulator('recognition');
const member = { 'x-recognition-token': DEMO_TOKENS.member };

/** `count` fragments, each spreading the next `fanOut` times; the last spreads the first (cyclic) or selects one field. */
function fanOutDocument(count: number, fanOut: number, cyclic: boolean): string {
  const fragments = Array.from({ length: count }, (_, index) => {
    const next = index === count - 1 ? (cyclic ? '...F0 '.repeat(fanOut) : 'teapot') : `...F${index + 1} `.repeat(fanOut);
    return `fragment F${index} on Query{${next.trim()}}`;
  });
  return `{...F0}${fragments.join('')}`;
}

/** The document: nine fragments each spreading the next eight times, the last back to the first. */
const CYCLIC = fanOutDocument(9, 8, true);
/** Forty levels of eight: 8^40 fields once expanded, astronomically long to walk spread by spread. */
const DEEP = fanOutDocument(40, 8, false);

const codes = (result: { errors?: { extensions?: Record<string, unknown> }[] }) => result.errors?.map((error) => error.extensions?.code);

describe('the depth and field limits', () => {
  it('measure each fragment once: visits grow with the document, not with its expansion', () => {
    const deep = measureDocument(parse(DEEP), 1000);
    // One walk of the operation and one of each fragment.
    expect(deep.visits).toBe(41);
    expect(deep.fragmentProblems).toEqual([]);
    const [measure] = [...deep.operations.values()];
    expect(measure!.fields).toBe(1001);
  });

  it('refuse cyclic and unknown fragments before measuring anything', () => {
    const cyclic = measureDocument(parse(CYCLIC), 1000);
    expect(cyclic.visits).toBe(0);
    expect(cyclic.fragmentProblems).toEqual([expect.stringContaining('fragment "F0" spreads itself')]);
    const unknown = measureDocument(parse('{ ...Missing }'), 1000);
    expect(unknown.visits).toBe(0);
    expect(unknown.fragmentProblems).toEqual(['unknown fragment "Missing"']);
  });

  it('refuse the cyclic document and the 8^40 one with GRAPHQL_VALIDATION_FAILED, no upstream call made', async () => {
    await emulator.clearRequests();
    const cyclic = await t.gql(CYCLIC, { headers: member });
    expect(cyclic.data).toBeUndefined();
    expect(new Set(codes(cyclic))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
    expect(cyclic.errors!.map((error) => error.message)).toContain('the operation cannot be measured: fragment "F0" spreads itself (through F0 -> F1 -> F2 -> F3 -> F4 -> F5 -> F6 -> F7 -> F8)');
    const deep = await t.gql(DEEP, { headers: member });
    expect(deep.errors).toEqual(expect.arrayContaining([expect.objectContaining({ message: 'the operation selects more than 1000 fields', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]));
    expect(await emulator.requests()).toEqual([]);
  });

  it('refuse the same documents over graphql-ws and SSE', async () => {
    for (const subscription of [subscribeWs(t.graphqlUrl, DEEP, { connectionParams: member }), subscribeSse(t.graphqlUrl, CYCLIC, { headers: member })]) {
      const ended = await subscription.ended;
      subscription.close();
      // graphql-ws reports validation errors as its error message; graphql-sse as a 400 whose body it quotes.
      const seen = `${JSON.stringify(subscription.results)} ${ended instanceof Error ? ended.message : JSON.stringify(ended)}`;
      expect(seen).toMatch(/more than 1000 fields|spreads itself/);
      expect(seen).toContain('GRAPHQL_VALIDATION_FAILED');
    }
  });
});

describe('alias and root field limits', () => {
  const aliases = (count: number) => `{ ${Array.from({ length: count }, (_, index) => `a${index}: teapot`).join(' ')} }`;

  it('refuse more than 100 aliases, counted through fragments', async () => {
    expect(codes(await t.gql(aliases(101), { headers: member }))).toEqual(['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_VALIDATION_FAILED']);
    const spread = `{ ...A ...A } fragment A on Query { ${Array.from({ length: 51 }, (_, index) => `a${index}: __typename`).join(' ')} }`;
    const result = await t.gql(spread, { headers: member });
    expect(result.errors?.map((error) => error.message)).toEqual(['the operation uses more than 100 aliases', 'the operation selects more than 50 root fields']);
  });

  it('refuse more than 50 root fields, and accept 50', async () => {
    const fifty = await t.gql(`{ ${Array.from({ length: 50 }, (_, index) => `t${index}: __typename`).join(' ')} }`);
    expect(fifty.errors).toBeUndefined();
    const many = await t.gql(`{ ${'__typename '.repeat(51)} }`);
    expect(many.errors?.map((error) => error.message)).toEqual(['the operation selects more than 50 root fields']);
  });
});

describe('introspection', () => {
  // What Sandbox, GraphiQL, codegen and rover send: `ofType` nested 9 times, depth 15 against the default 12.
  const STANDARD = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true });

  it('answers the standard introspection query, which nests deeper than the depth limit, `isOneOf` included', async () => {
    const result = await t.gql<IntrospectionQuery>(STANDARD);
    expect(result.errors).toBeUndefined();
    const schema = buildClientSchema(result.data!);
    expect(schema.getQueryType()?.getFields()).toHaveProperty('rewardCatalog');
    // Answered by the gateway itself, it is what Apollo's planner gives beside data.
    const withoutOneOf = getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true });
    const alone = await t.gql<IntrospectionQuery>(withoutOneOf);
    const beside = await t.gql<IntrospectionQuery & { rewardCatalog: unknown }>(withoutOneOf.replace('__schema {', 'rewardCatalog { name } __schema {'), { headers: member });
    expect(beside.errors).toBeUndefined();
    expect(beside.data!.__schema).toEqual(alone.data!.__schema);
  });

  it('refuses as invalid, not as a crash, introspection Apollo\'s planner cannot model beside data', async () => {
    await emulator.clearRequests();
    const mixed = await t.gql('{ rewardCatalog { name } __type(name: "Reward") { isOneOf } }', { headers: member });
    expect(mixed.errors).toEqual([expect.objectContaining({ message: 'Cannot query field "isOneOf" on type "__Type".', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
    expect(await emulator.requests()).toEqual([]);
  });

  it('still counts depth below `__type` for data, and refuses introspection lists nested three deep', async () => {
    // Data is reached only outside `__schema` and `__type`, and its depth counts as before.
    const [measure] = measureDocument(parse('{ a { b { c { d } } } __type(name: "Query") { ofType { ofType { ofType { ofType { name } } } } } }'), 1000).operations.values();
    expect(measure).toEqual({ depth: 4, fields: 10, aliases: 0, topFields: 2 });
    const multiplying = '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }';
    const refused = await t.gql(multiplying);
    expect(refused.data).toBeUndefined();
    expect(refused.errors).toEqual([expect.objectContaining({ message: 'Maximum introspection depth exceeded', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
    const overWs = subscribeWs(t.graphqlUrl, multiplying);
    const ended = await overWs.ended;
    overWs.close();
    expect(`${JSON.stringify(overWs.results)} ${ended instanceof Error ? ended.message : JSON.stringify(ended)}`).toContain('Maximum introspection depth exceeded');
  });
});

describe('the token and definition bounds', () => {
  const post = (body: unknown) => fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...member }, body: JSON.stringify(body) });
  const tokensOf = (text: string) => {
    const lexer = new Lexer(new Source(text));
    let count = 0;
    while (lexer.advance().kind !== TokenKind.EOF) count += 1;
    return count;
  };

  it("refuses each of the QA probe's documents as it parses, with GRAPHQL_PARSE_FAILED, no upstream call made", async () => {
    await emulator.clearRequests();
    for (const [name, body] of Object.entries(TOKEN_PROBES)) {
      const started = performance.now();
      const response = await post(body);
      const result = (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
      const elapsed = performance.now() - started;
      expect({ name, status: response.status, data: result.data }).toEqual({ name, status: 400, data: undefined });
      // graphql-js's words (16 writes "more that"): the parse stopped at the bound, nothing walked the rest.
      expect(result.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/^Syntax Error: Document contains more tha[nt] 20000 tokens\. Parsing aborted\.$/), extensions: expect.objectContaining({ code: 'GRAPHQL_PARSE_FAILED' }) })]);
      // Parsed and validated whole, each took 300 to 550 ms, on every repeat; loose, for a busy machine.
      expect(elapsed).toBeLessThan(1000);
    }
    expect(await emulator.requests()).toEqual([]);
  });

  it('parses a subscription within the same bound over graphql-ws and SSE', async () => {
    const query = `subscription { bonusCreated { id ${'@skip(if: false) '.repeat(25_000)}} }`;
    for (const subscription of [subscribeWs(t.graphqlUrl, query, { connectionParams: member }), subscribeSse(t.graphqlUrl, query, { headers: member })]) {
      const ended = await Promise.race([subscription.ended, new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
      subscription.close();
      const seen = `${JSON.stringify(subscription.results)} ${JSON.stringify(ended)}`;
      expect(seen).toMatch(/Document contains more tha[nt] 20000 tokens/);
      expect(seen).toContain('GRAPHQL_PARSE_FAILED');
    }
  });

  it('refuses more than 250 operations and fragments with GRAPHQL_VALIDATION_FAILED, and runs one of 250', async () => {
    const refused = (await (await post({ query: manyOperations(251), operationName: 'Q250' })).json()) as { data?: unknown; errors?: unknown[] };
    expect(refused.data).toBeUndefined();
    expect(refused.errors).toEqual([expect.objectContaining({ message: 'the document holds 251 operations and fragments; at most 250 are allowed', extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
    const run = await (await post({ query: manyOperations(250), operationName: 'Q249' })).json();
    expect(run).toEqual({ data: { __typename: 'Query' } });
  });

  it('takes every operation within the four shape limits, arguments on every field, and every introspection query', async () => {
    const heaviest = argumentsAtGatewayLimits();
    const introspection = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true });
    for (const text of [heaviest, queryAtGatewayLimits('d'), subscriptionAtGatewayLimits(), introspection]) expect(tokensOf(text)).toBeLessThan(GATEWAY_OPERATION_LIMITS.maxTokens);
    // Its made-up fields are refused, once parsed: what it shows is that the parse took it.
    const result = (await (await post({ query: heaviest })).json()) as { errors?: { extensions?: Record<string, unknown> }[] };
    expect(new Set(codes(result))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
  });
});
