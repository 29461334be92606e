import { describe, expect, it } from 'vitest';
import { execute, parse, type GraphQLFormattedError } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { formatGraphError } from '../../lib/errorFormatting.ts';
import { DateScalar, DateTimeScalar } from '../../lib/scalars.ts';
import { badUserInput } from '../../subgraphs/kit/errors.ts';
import { capturedLogs, testLogger } from '../support/logs.ts';

const schema = buildSubgraphSchema({
  typeDefs: parse(`scalar Date scalar DateTime enum Colour { RED }
    type Query { int: Int float: Float string: String flag: Boolean colour: Colour day: Date instant: DateTime checked(id: String): String good: Int }`),
  resolvers: {
    Date: DateScalar,
    DateTime: DateTimeScalar,
    Query: {
      int: () => 3_000_000_000,
      float: () => 'fast',
      string: () => ({ secret: 'kept-out-of-the-answer' }),
      flag: () => 'yes',
      colour: () => 'GREEN',
      day: () => '2026-02-30',
      instant: () => 'yesterday',
      checked: () => {
        throw badUserInput('id', 'give an id');
      },
      good: () => 1,
    },
  },
});

const QUERY = '{ int float string flag colour day instant checked good }';

async function formatted(service: string | undefined, compiled: boolean): Promise<{ data: unknown; errors: GraphQLFormattedError[] }> {
  const document = parse(QUERY);
  const jit = compiled ? compileQuery(schema, document) : undefined;
  if (jit && !isCompiledQuery(jit)) throw new Error('did not compile');
  const result = jit ? await jit.query(undefined, {}, {}) : await execute({ schema, document });
  const format = formatGraphError(testLogger('subgraph'), service === undefined ? {} : { service });
  // Apollo Server gives a code to every error without one before formatError sees it.
  const errors = (result.errors ?? []).map((error) => {
    const json = error.toJSON();
    return format({ ...json, extensions: { code: 'INTERNAL_SERVER_ERROR', ...json.extensions } }, error);
  });
  return { data: result.data, errors };
}

describe('formatGraphError', () => {
  it.each([false, true])('in a subgraph, names each value its field’s type cannot carry as the service’s error at its path (compiled: %s)', async (compiled) => {
    const { data, errors } = await formatted('svc', compiled);
    expect(data).toMatchObject({ good: 1, int: null, day: null });
    const byField = Object.fromEntries(errors.map((error) => [String(error.path?.[0]), error]));
    for (const field of ['int', 'float', 'string', 'flag', 'colour', 'day', 'instant']) {
      expect(byField[field]?.extensions, field).toEqual({ code: 'UPSTREAM_ERROR', service: 'svc' });
    }
    expect(byField.int?.message).toBe('svc: the service answered 3000000000, which Int cannot represent');
    expect(byField.colour?.message).toBe('svc: the service answered a value, which Enum "Colour" cannot represent');
    expect(byField.day?.message).toBe('svc: the service answered a value, which Date cannot represent');
    // Only numbers are quoted: an upstream object or text stays in the log.
    expect(JSON.stringify(errors)).not.toContain('kept-out-of-the-answer');
    expect(JSON.stringify(errors)).not.toContain('yesterday');
    // A resolver's own input error is the caller's, path or not.
    expect(byField.checked?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id' });
  });

  it('outside a subgraph leaves such an error to the mask: an internal error, logged', async () => {
    const before = capturedLogs.length;
    const { errors } = await formatted(undefined, false);
    const int = errors.find((error) => error.path?.[0] === 'int');
    expect(int).toEqual({ message: 'Internal server error', path: ['int'], locations: [{ line: 1, column: 3 }], extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(capturedLogs.slice(before).some((line) => line.includes('Int cannot represent'))).toBe(true);
  });
});
