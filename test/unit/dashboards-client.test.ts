import { describe, expect, it } from 'vitest';
import { ANSWERS, encodeFilters, holdsResource, toDimensionGroups } from '../../subgraphs/dashboards/client.ts';

describe('the dashboards client reads every documented variant, and nothing less', () => {
  it('encodes filters as base64 JSON of exactly dimension, operator and value', () => {
    const encoded = encodeFilters([{ dimension: 'host', operator: 'is', value: 'a.example', extra: 'dropped' } as never]);
    expect(JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))).toEqual([{ dimension: 'host', operator: 'is', value: 'a.example' }]);
  });

  it('takes a list envelope with the total as text, or a bare array', () => {
    expect(ANSWERS.dashboards.parse({ results: [{ id: 1, name: 'A', slug: 'a' }], totalCount: '21', currentPage: 0 })).toEqual({ results: [{ id: '1', name: 'A', slug: 'a' }], totalCount: 21, currentPage: 0 });
    expect(ANSWERS.dashboards.parse([{ id: 'x', name: 'X', slug: 'x' }])).toEqual({ results: [{ id: 'x', name: 'X', slug: 'x' }], totalCount: null, currentPage: null });
  });

  it('refuses a list item without its name rather than making one up', () => {
    expect(ANSWERS.dashboards.safeParse([{ id: 'x' }]).success).toBe(false);
    expect(ANSWERS.dashboards.safeParse({ results: { id: 'x', name: 'X', slug: 'x' } }).success).toBe(false);
  });

  it('finds the one resource in `{results: [X]}` (with or without the real service’s totals), `{results: X}` or X', () => {
    const dashboard = { id: 'd', name: 'D', slug: 'd' };
    for (const body of [{ results: [dashboard] }, { results: [dashboard], totalCount: 1, currentPage: 0 }, { results: dashboard }, dashboard]) {
      expect(ANSWERS.dashboard.parse(body)).toEqual(dashboard);
      expect(holdsResource(body)).toBe(true);
    }
    expect(holdsResource(undefined)).toBe(false);
    expect(holdsResource({ results: [] })).toBe(false);
    expect(ANSWERS.dashboard.safeParse({ results: [] }).success).toBe(false);
  });

  it('keeps an environment list item without filters, so they are read from the environment', () => {
    expect(ANSWERS.environment.parse({ id: 'e', slug: 's', name: 'n', default: 'true' })).toEqual({ id: 'e', slug: 's', name: 'n', isDefault: true });
    expect(ANSWERS.environment.parse({ id: 'e', slug: 's', name: 'n', default: false, filters: [{ dimension: 'd', operator: 'is', value: 1 }] }).filters).toEqual([{ dimension: 'd', operator: 'is', value: '1' }]);
  });

  it('reads grouped dimensions in each shape a category may take', () => {
    expect(toDimensionGroups({ Request: [{ name: 'method', type: 'string' }, 'path'], Response: { status: 'number' } })).toEqual([
      { category: 'Request', dimensions: [{ name: 'method', type: 'string' }, { name: 'path', type: null }] },
      { category: 'Response', dimensions: [{ name: 'status', type: 'number' }] },
    ]);
    expect(toDimensionGroups([{ category: 'Consumer', dimensions: ['country'] }])).toEqual([{ category: 'Consumer', dimensions: [{ name: 'country', type: null }] }]);
  });
});
