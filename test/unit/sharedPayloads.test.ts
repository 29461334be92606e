import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSharedPayloads } from '../../gateway/subscriptions/sharedPayloads.ts';
import { createRequire } from 'node:module';
import { nextFrame, textFrame } from '../../gateway/subscriptions/wsFrames.ts';
import { sharedNextEvent } from '../../gateway/subscriptions/sse.ts';

/** ws's own framing (untyped in @types/ws), the reference a whole frame must match. */
const { frame: wsFrame } = (createRequire(import.meta.url)('ws') as { Sender: unknown }).Sender as { frame(data: Buffer, options: { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean }): Buffer[] };

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

  it('build an SSE next event once per payload, as graphql-sse writes it in distinct connections mode', () => {
    const payloads = createSharedPayloads();
    const result = { data: { bonusCreated: { bonus: { id: 'b1', hashtag: '#ünïcode' } } } };
    const events = Array.from({ length: 100 }, () => sharedNextEvent(payloads.bytesOf(result)));
    expect(new Set(events).size).toBe(1);
    expect(events[0]!.toString('utf8')).toBe(`event: next\ndata: ${JSON.stringify(result)}\n\n`);
    expect(sharedNextEvent(payloads.bytesOf({ data: null }))).not.toBe(events[0]);
  });

  it('frame a next message byte for byte as graphql-ws serialises it, whatever the id', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), fc.jsonValue(), (id, data) => {
        const payload = { data };
        expect(nextFrame(id, Buffer.from(JSON.stringify(payload))).toString('utf8')).toBe(JSON.stringify({ id, type: 'next', payload }));
      }),
    );
  });

  it("frame a message as a whole WebSocket text frame, header and all, as ws's sender frames a server's", () => {
    // Each side of the two length boundaries of RFC 6455's header (126 and 65,536 bytes).
    const lengths = fc.oneof(fc.constantFrom(0, 1, 125, 126, 127, 65_535, 65_536, 65_537), fc.nat({ max: 200_000 }));
    fc.assert(
      fc.property(lengths, fc.nat({ max: 255 }), (length, fill) => {
        const message = Buffer.alloc(length, fill);
        const expected = Buffer.concat(wsFrame(message, { fin: true, rsv1: false, opcode: 1, mask: false, readOnly: false }));
        expect(textFrame(message).equals(expected)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});
