import { describe, expect, it } from 'vitest';
import { encodeFilters, pageOf, resultOf, toDashboard, toDimensionGroups, toEnvironment } from '../../subgraphs/dashboards/client.ts';

describe('the dashboards client reads liberally', () => {
  it('encodes filters as base64 JSON of exactly dimension, operator and value', () => {
    const encoded = encodeFilters([{ dimension: 'host', operator: 'is', value: 'a.example', extra: 'dropped' } as never]);
    expect(JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))).toEqual([{ dimension: 'host', operator: 'is', value: 'a.example' }]);
  });

  it('takes a list envelope with the total as text, or a bare array', () => {
    expect(pageOf({ results: [{ id: 1, name: 'A', slug: 'a' }], totalCount: '21', currentPage: 0 }, toDashboard)).toEqual({ items: [{ id: '1', name: 'A', slug: 'a' }], totalCount: 21 });
    expect(pageOf([{ id: 'x' }], toDashboard)).toEqual({ items: [{ id: 'x', name: '', slug: '' }], totalCount: null });
  });

  it('finds the one resource in `{results: [X]}`, `{results: X}` or X, and nothing in an empty answer', () => {
    for (const body of [{ results: [{ id: 'd' }] }, { results: { id: 'd' } }, { id: 'd' }]) expect(resultOf(body)).toEqual({ id: 'd' });
    expect(resultOf(undefined)).toBeUndefined();
    expect(resultOf({ results: [] })).toBeUndefined();
  });

  it('keeps an environment list item without filters, so they are read from the environment', () => {
    expect(toEnvironment({ id: 'e', slug: 's', name: 'n', default: 'true' })).toEqual({ id: 'e', slug: 's', name: 'n', default: true });
    expect(toEnvironment({ id: 'e', filters: [{ dimension: 'd', operator: 'is', value: 1 }] }).filters).toEqual([{ dimension: 'd', operator: 'is', value: '1' }]);
  });

  it('reads grouped dimensions in each shape a category may take', () => {
    expect(toDimensionGroups({ Request: [{ name: 'method', type: 'string' }, 'path'], Response: { status: 'number' } })).toEqual([
      { category: 'Request', dimensions: [{ name: 'method', type: 'string' }, { name: 'path', type: null }] },
      { category: 'Response', dimensions: [{ name: 'status', type: 'number' }] },
    ]);
    expect(toDimensionGroups([{ category: 'Consumer', dimensions: ['country'] }])).toEqual([{ category: 'Consumer', dimensions: [{ name: 'country', type: null }] }]);
  });
});
