import { describe, expect, it } from 'vitest';
import { DateTimeScalar, isCanonicalInstant } from '../../lib/scalars.ts';

const viaDate = (value: string): string | null => {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
};

describe('DateTime', () => {
  it('takes a string as canonical exactly when a Date would give it back unchanged', () => {
    const pad = (value: number, width: number) => String(value).padStart(width, '0');
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    for (let index = 0; index < 50_000; index += 1) {
      // Fields drawn past their bounds too: month 0-13, day 0-32, hour 0-25, minute and second 0-61.
      const value = `${pad(random(10_000), 4)}-${pad(random(14), 2)}-${pad(random(33), 2)}T${pad(random(26), 2)}:${pad(random(62), 2)}:${pad(random(62), 2)}.${pad(random(1000), 3)}Z`;
      expect(isCanonicalInstant(value), value).toBe(viaDate(value) === value);
    }
    for (const value of ['2024-02-29T12:00:00.000Z', '2000-02-29T00:00:00.000Z']) expect(isCanonicalInstant(value)).toBe(true);
    for (const value of ['2023-02-29T12:00:00.000Z', '1900-02-29T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-11-22T07:18:18Z', '2026-11-22T07:18:18.000+00:00', ' 2026-11-22T07:18:18.000Z']) {
      expect(isCanonicalInstant(value), value).toBe(false);
    }
  });

  it('serialises every other shape through a Date, and refuses what is not an instant', () => {
    expect(DateTimeScalar.serialize('2026-11-22T07:18:18.000Z')).toBe('2026-11-22T07:18:18.000Z');
    expect(DateTimeScalar.serialize('2026-11-22T07:18:18Z')).toBe('2026-11-22T07:18:18.000Z');
    expect(DateTimeScalar.serialize('2026-11-22T08:18:18.000+01:00')).toBe('2026-11-22T07:18:18.000Z');
    expect(DateTimeScalar.serialize('2026-02-30T00:00:00.000Z')).toBe('2026-03-02T00:00:00.000Z');
    expect(DateTimeScalar.serialize(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(() => DateTimeScalar.serialize('yesterday')).toThrow('DateTime cannot represent value: "yesterday"');
    expect(() => DateTimeScalar.parseValue('yesterday')).toThrow(/ISO 8601/);
  });
});
