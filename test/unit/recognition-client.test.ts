import { describe, expect, it } from 'vitest';
import { serviceDate } from '../../subgraphs/recognition/client.ts';
import { DateScalar, DateTimeScalar } from '../../lib/scalars.ts';

describe('recognition dates', () => {
  it('formats ISO dates as the service’s DD Mon YYYY', () => {
    expect(serviceDate('2026-01-05')).toBe('05 Jan 2026');
    expect(serviceDate('2025-12-31')).toBe('31 Dec 2025');
  });

  it('accepts only real calendar dates', () => {
    expect(DateScalar.parseValue('2024-02-29')).toBe('2024-02-29');
    expect(() => DateScalar.parseValue('2026-02-30')).toThrow(/does not exist/);
    expect(() => DateScalar.parseValue('05 Jan 2026')).toThrow(/calendar date/);
  });

  it('serialises instants as ISO 8601 in UTC', () => {
    expect(DateTimeScalar.serialize('2026-11-22T08:00:00+01:00')).toBe('2026-11-22T07:00:00.000Z');
    expect(() => DateTimeScalar.serialize('yesterday')).toThrow();
  });
});
