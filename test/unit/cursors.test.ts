import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../subgraphs/kit/cursors.ts';

describe('cursors', () => {
  it('round-trip a versioned payload of their kind', () => {
    const cursor = encodeCursor('questions', { upstream: 'abc', status: 'ANSWERED' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, 'questions')).toMatchObject({ upstream: 'abc', status: 'ANSWERED' });
  });

  it('refuse garbage and another list’s cursor with BAD_USER_INPUT naming the argument', () => {
    for (const [cursor, kind] of [['not a cursor', 'questions'], [encodeCursor('products', {}), 'questions']] as const) {
      try {
        decodeCursor(cursor, kind, 'after');
        expect.unreachable();
      } catch (error) {
        expect((error as { extensions: unknown }).extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
      }
    }
  });
});
