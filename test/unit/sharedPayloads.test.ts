import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSharedPayloads } from '../../gateway/subscriptions/sharedPayloads.ts';
import { nextFrame } from '../../gateway/subscriptions/wsFrames.ts';

describe('shared payloads', () => {
  it('serialise a result once however many subscribers ask, and each distinct result once', () => {
    let calls = 0;
    const payloads = createSharedPayloads({ serialize: (value) => ((calls += 1), JSON.stringify(value)) });
    const event = { data: { bonusCreated: { id: 'b1' } } };
    const other = { data: { bonusCreated: { id: 'b2' } } };
    const frames = Array.from({ length: 1000 }, () => payloads.bytesOf(event));
    expect(new Set(frames).size).toBe(1);
    expect(payloads.bytesOf(other).toString()).toBe(JSON.stringify(other));
    expect(calls).toBe(2);
    expect(payloads.serializations).toBe(2);
  });

  it('frame a next message byte for byte as graphql-ws serialises it, whatever the id', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), fc.jsonValue(), (id, data) => {
        const payload = { data };
        expect(nextFrame(id, Buffer.from(JSON.stringify(payload))).toString('utf8')).toBe(JSON.stringify({ id, type: 'next', payload }));
      }),
    );
  });
});
