import { describe, expect, it } from 'vitest';
import { asText } from '../../subgraphs/kit/envelopes.ts';
import { toDimensionGroups } from '../../subgraphs/dashboards/client.ts';
import { toUser } from '../../subgraphs/recognition/client.ts';

describe('asText', () => {
  it('takes text, numbers and booleans, and reads anything else as no text rather than `[object Object]` or a throw', () => {
    expect([asText('a'), asText(''), asText(12), asText(false)]).toEqual(['a', '', '12', 'false']);
    expect([asText(null), asText(undefined), asText({}), asText([1]), asText({ toString: 1 }), asText(Symbol('s'))]).toEqual([null, null, null, null, null, null]);
  });

  it('keeps an upstream object where text belongs from failing a user or a dimension group', () => {
    expect(toUser({ id: 'usr_1', display_name: { toString: 1 }, email: ['a@b.example'] })).toMatchObject({ id: 'usr_1', display_name: null, email: null });
    expect(toDimensionGroups([{ category: { toString: 1 }, name: 'Traffic', dimensions: [{ name: { x: 1 }, dimension: 'path', type: 'string' }] }])).toEqual([
      { category: 'Traffic', dimensions: [{ name: 'path', type: 'string' }] },
    ]);
  });
});
