import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createOperationPreparer } from '../../gateway/subscriptions/prepare.ts';

const schema = buildSchema('type Query { hello(name: String): String } type Subscription { tick(every: Int): Int }');

describe('the streaming transports’ operation preparer', () => {
  it('shares one parsed document among identical operations, each keeping its own variables', () => {
    const prepare = createOperationPreparer({ schema });
    const query = 'subscription Ticks($every: Int) { tick(every: $every) }';
    const first = prepare({ query, variables: { every: 1 } });
    const second = prepare({ query, variables: { every: 2 } });
    if ('errors' in first || 'errors' in second) throw new Error('expected both to pass');
    expect(second.document).toBe(first.document);
    expect([first.variableValues, second.variableValues]).toEqual([{ every: 1 }, { every: 2 }]);
    const other = prepare({ query: 'subscription { tick }' });
    expect('document' in other && other.document).not.toBe(first.document);
  });

  it('still refuses, every time, what does not parse or validate, and checks the operation name per request', () => {
    const prepare = createOperationPreparer({ schema });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect(prepare({ query: 'subscription { tick' })).toMatchObject({ errors: [{ extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] });
      expect(prepare({ query: 'subscription { nope }' })).toMatchObject({ errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
    }
    const query = 'subscription A { tick } subscription B { tick(every: 2) }';
    expect(prepare({ query, operationName: 'A' })).toMatchObject({ operationName: 'A' });
    expect(prepare({ query, operationName: 'C' })).toMatchObject({ errors: [{ extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } }] });
  });

  it('parses a query text over 16 KiB every time rather than remembering it', () => {
    const prepare = createOperationPreparer({ schema });
    const query = `subscription { tick }${' '.repeat(17 * 1024)}`;
    const [first, second] = [prepare({ query }), prepare({ query })];
    if ('errors' in first || 'errors' in second) throw new Error('expected both to pass');
    expect(second.document).not.toBe(first.document);
  });
});
