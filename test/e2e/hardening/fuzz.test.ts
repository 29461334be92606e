import fc from 'fast-check';
import { getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isObjectType, isScalarType, type GraphQLInputType, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { KNOWN_ERROR_CODES } from '../../../lib/errorFormatting.ts';
import { startTestStack } from '../../support/stack.ts';
import { overHttp, overSse, overWs, type WireOutcome } from '../../support/transports.ts';

/**
 * Issue 14, "What it must show": generated documents, variables and bodies over HTTP, SSE and
 * graphql-ws. Whatever arrives, no 5xx, every error carries a code the README documents (a masked
 * INTERNAL_SERVER_ERROR is a bug, so it fails here too), and afterwards the gateway is alive and
 * /health answers promptly. Seeded (a failure prints its seed and path to replay), bounded in runs
 * and in time.
 */
const SEED = 1414;
const RUNS = 90;
const TIME_LIMIT_MS = 25_000;
/** The issue asks /health to answer within 100 ms afterwards; the bound is generous for a shared CI machine, and still fails a hung event loop. */
const HEALTH_BOUND_MS = 1000;

const t = await startTestStack({ NODE_ENV: 'production' });
const schema = t.stack.gateway.subscriptions.planner.graphqlApiSchema;
const queryType = schema.getQueryType()!;

const LONE_SURROGATES = ['\ud800', 'a\udfffb', '\udc00\ud800'];
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom(...LONE_SURROGATES, 'rd_001', 'rw_bookshop_25', '2026-11-01', '..', '../x', '%2e%2e', ''));
const jsonish = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    text,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...LONE_SURROGATES)), tie('value'), { maxKeys: 3 }),
  ),
})).value;

const graphqlString = (value: string) => JSON.stringify(value);

/** A literal for an input type: mostly of the right shape, sometimes not, sometimes a variable. */
function literalFor(type: GraphQLInputType, depth: number): fc.Arbitrary<string> {
  const named = getNamedType(type);
  const wrong = fc.constantFrom('1', '"x"', 'true', 'null', '[]', '{}', 'FOO', '$v', '"2026-13-45"', '1e999');
  if (isListType(isNonNullType(type) ? type.ofType : type) && depth < 2) {
    return fc.oneof(fc.array(literalFor((isNonNullType(type) ? type.ofType : type) as never, depth + 1), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`), wrong);
  }
  if (isEnumType(named)) return fc.oneof(fc.constantFrom(...named.getValues().map((value) => value.name)), wrong);
  if (isInputObjectType(named) && depth < 2) {
    const fields = Object.values(named.getFields());
    return fc.oneof(
      fc.subarray(fields, { maxLength: Math.min(3, fields.length) }).chain((chosen) => fc.tuple(...chosen.map((field) => literalFor(field.type, depth + 1))).map((values) => `{ ${chosen.map((field, index) => `${field.name}: ${values[index]}`).join(', ')} }`)),
      wrong,
    );
  }
  if (isScalarType(named)) {
    return fc.oneof(text.map(graphqlString), fc.integer().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map(String), fc.boolean().map(String), wrong);
  }
  return wrong;
}

/** A selection on an object type: real fields with real or wrong arguments, aliases, a bogus name now and then. */
function selectionOn(type: GraphQLObjectType, depth: number): fc.Arbitrary<string> {
  const fields = Object.values(type.getFields());
  const field = fc.constantFrom(...fields).chain((chosen) => {
    const args = fc.subarray([...chosen.args], { maxLength: Math.min(3, chosen.args.length) }).chain((picked) =>
      picked.length ? fc.tuple(...picked.map((arg) => literalFor(arg.type, 0))).map((values) => `(${picked.map((arg, index) => `${arg.name}: ${values[index]}`).join(', ')})`) : fc.constant(''),
    );
    const inner = getNamedType(chosen.type);
    const sub = isObjectType(inner) && depth < 3 ? selectionOn(inner, depth + 1).map((selection) => ` { ${selection} }`) : fc.constant('');
    const alias = fc.option(fc.constantFrom('a', 'b', 'x1'), { nil: undefined }).map((name) => (name ? `${name}: ` : ''));
    return fc.tuple(alias, args, sub).map(([aliasText, argText, subText]) => `${aliasText}${chosen.name}${argText}${subText}`);
  });
  const bogus = fc.constantFrom('nosuchField', '__typename', '...on Query { __typename }', '__schema { types { name } }');
  return fc.array(fc.oneof({ weight: 5, arbitrary: field }, { weight: 1, arbitrary: bogus }), { minLength: 1, maxLength: 3 }).map((parts) => parts.join(' '));
}

const document = fc.oneof(
  { weight: 6, arbitrary: selectionOn(queryType, 0).map((selection) => `query Q($v: String, $id: ID, $d: Date) { ${selection} }`) },
  { weight: 2, arbitrary: selectionOn(queryType, 0).map((selection) => `{ ${selection} } { ${selection} }`) },
  { weight: 2, arbitrary: fc.tuple(selectionOn(queryType, 0), fc.nat({ max: 40 })).map(([selection, cut]) => `{ ${selection} }`.slice(0, cut)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('fragment F on Query { ...F } { ...F }', 'query { ...Missing }', '{ teapot @skip(if: $nope) }', 'subscription { nosuch }', '{ redemptions(ids: ["rd_001"]) { id } }') },
);

const request = fc.record(
  {
    query: fc.oneof({ weight: 8, arbitrary: document }, { weight: 1, arbitrary: jsonish }),
    variables: fc.oneof(fc.dictionary(fc.constantFrom('v', 'id', 'd', 'ids'), jsonish, { maxKeys: 3 }), jsonish),
    operationName: fc.oneof(fc.constantFrom('Q', 'Nope', ''), jsonish),
    extensions: jsonish,
  },
  { requiredKeys: ['query'] },
);

/** A raw body: the request as JSON, or JSON with something off, or not JSON at all. */
const body = fc.oneof(
  { weight: 6, arbitrary: request.map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: request.map((value) => JSON.stringify([value, value])) },
  { weight: 1, arbitrary: fc.tuple(request, fc.nat({ max: 30 })).map(([value, cut]) => JSON.stringify(value).slice(0, cut)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: jsonish.map((value) => JSON.stringify(value) ?? 'null') },
);
const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain;x=json', 'application/x-www-form-urlencoded;json', 'application/graphql-response+json', 'text/plain');

const DOCUMENTED = new Set(KNOWN_ERROR_CODES);

function check(outcome: WireOutcome, transport: string): void {
  if (transport !== 'graphql-ws') expect(outcome.status, `${transport} answered ${outcome.status}: ${outcome.text.slice(0, 300)}`).toBeLessThan(500);
  for (const error of outcome.body?.errors ?? []) {
    expect(DOCUMENTED.has(String(error.extensions?.code)), `${transport}: undocumented code in ${JSON.stringify(error).slice(0, 300)}`).toBe(true);
  }
  expect(outcome.text).not.toMatch(/Did you mean/);
}

const isRecord = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
const nullish = (value: unknown) => value === undefined || value === null;

/** What graphql-transport-ws accepts as a `subscribe` payload. */
function wellFormedMessage({ query, variables, operationName, extensions }: { query: unknown; variables?: unknown; operationName?: unknown; extensions?: unknown }): boolean {
  return typeof query === 'string' && (nullish(variables) || isRecord(variables)) && (nullish(operationName) || typeof operationName === 'string') && (nullish(extensions) || isRecord(extensions));
}

async function health(): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${t.stack.gateway.url}/health`);
  expect(response.status).toBe(200);
  await response.text();
  return performance.now() - started;
}

describe('fuzzing every transport', () => {
  it('answers generated bodies over HTTP with no 5xx and documented codes only', { timeout: TIME_LIMIT_MS + 20_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(body, contentType, async (raw, type) => {
        const outcome = await overHttp(t.graphqlUrl, raw, { ...t.stack.demoHeaders, 'content-type': type });
        check(outcome, 'HTTP');
      }),
      { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    expect(await health()).toBeLessThan(HEALTH_BOUND_MS);
  });

  it('answers generated bodies over SSE with no 5xx and documented codes only', { timeout: TIME_LIMIT_MS + 20_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(body, async (raw) => {
        check(await overSse(t.graphqlUrl, raw, t.stack.demoHeaders), 'SSE');
      }),
      { seed: SEED + 1, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    expect(await health()).toBeLessThan(HEALTH_BOUND_MS);
  });

  it('answers generated operations over graphql-ws with documented codes only, never closing on them', { timeout: TIME_LIMIT_MS + 20_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(request, async (payload) => {
        const outcome = await overWs(t.graphqlUrl, payload, t.stack.demoHeaders);
        // The protocol closes the connection (4400) on a malformed `subscribe` message; any other
        // close would mean the server gave up on it (4500: internal error).
        expect(outcome.status, `graphql-ws closed with ${outcome.status}`).toBe(wellFormedMessage(JSON.parse(JSON.stringify(payload)) as typeof payload) ? 0 : 4400);
        check(outcome, 'graphql-ws');
      }),
      { seed: SEED + 2, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    expect(await health()).toBeLessThan(HEALTH_BOUND_MS);
  });
});
