import http from 'node:http';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BrokenBatch, budgetsOf, encodeFrame, FrameReader, READ_BATCH_HEADER, READ_BATCH_TYPE } from '../../lib/readBatch.ts';
import { listen } from '../../lib/http.ts';
import { createUndiciFetcher } from '../../gateway/fetcher.ts';
import { createReadBatcher } from '../../gateway/readBatches.ts';

describe('batch frames', () => {
  it('are read whole however the stream is cut', () => {
    const answer = fc.record({ status: fc.constantFrom(200, 400, 500), body: fc.string({ maxLength: 200 }), cacheControl: fc.option(fc.constantFrom('max-age=60, private', 'no-store'), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(answer, { minLength: 1, maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }), (answers, cuts) => {
        const order = answers.map((_, index) => index).reverse();
        const stream = Buffer.concat(order.flatMap((index) => encodeFrame(index, answers[index]!.status, answers[index]!.cacheControl ? { 'cache-control': answers[index]!.cacheControl! } : {}, Buffer.from(answers[index]!.body))));
        const reader = new FrameReader(answers.length, 1024);
        const frames = [];
        let at = 0;
        for (let cut = 0; at < stream.length; cut += 1) {
          const size = cuts[cut % cuts.length]!;
          frames.push(...reader.push(stream.subarray(at, at + size)));
          at += size;
        }
        expect(reader.complete).toBe(true);
        expect(frames.map((frame) => frame.index)).toEqual(order);
        for (const frame of frames) {
          expect(frame.status).toBe(answers[frame.index]!.status);
          expect(frame.body.toString('utf8')).toBe(answers[frame.index]!.body);
          expect(frame.headers['cache-control']).toBe(answers[frame.index]!.cacheControl);
        }
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['a frame line past 8 KiB', Buffer.from(`0 200 1 {"a":"${'x'.repeat(9000)}"}\n`)],
    ['a line with no newline past 8 KiB', Buffer.from('0'.repeat(9000))],
    ['a body past the cap', Buffer.concat(encodeFrame(0, 200, {}, Buffer.alloc(2048)))],
    ['an index outside the batch', Buffer.concat(encodeFrame(2, 200, {}, Buffer.from('{}')))],
    ['an index told twice', Buffer.concat([...encodeFrame(0, 200, {}, Buffer.from('{}')), ...encodeFrame(0, 200, {}, Buffer.from('{}'))])],
    ['a line that is not a frame', Buffer.from('hello world\n')],
    ['headers that are not JSON', Buffer.from('0 200 2 {"a":[}\n{}')],
  ])('refuse %s', (_what, bytes) => {
    const reader = new FrameReader(2, 1024);
    expect(() => reader.push(bytes)).toThrow(BrokenBatch);
  });

  it('budgets are one per read, capped, `-` the cap', () => {
    expect(budgetsOf('3,-,2000', 3, 1000)).toEqual([3, 1000, 1000]);
    expect(budgetsOf('3,-', 3, 1000)).toBeUndefined();
    expect(budgetsOf('3,-1', 2, 1000)).toBeUndefined();
    expect(budgetsOf(undefined, 1, 1000)).toBeUndefined();
  });
});

describe('a subgraph that does not take batches', () => {
  const requests: { batch: boolean; body: string }[] = [];
  let frames: ((res: http.ServerResponse, body: unknown[]) => void) | undefined;
  /** A frame for every read of the batch. */
  const everyFrame = (res: http.ServerResponse, body: unknown[]) => {
    res.writeHead(200, { 'content-type': READ_BATCH_TYPE });
    body.forEach((_, index) => res.write(Buffer.concat(encodeFrame(index, 200, {}, Buffer.from('{"data":{}}')))));
    res.end();
  };
  /** What the server answers a batch when it does not answer frames. */
  let refusal = 400;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const batch = req.headers[READ_BATCH_HEADER] !== undefined;
      requests.push({ batch, body });
      if (batch && frames) return frames(res, JSON.parse(body) as unknown[]);
      if (batch) {
        res.writeHead(refusal, { 'content-type': 'application/json' });
        return res.end('{"errors":[{"message":"Operation batching disabled."}]}');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { echo: (JSON.parse(body) as { query: string }).query } }));
    });
  });
  const started = listen(server, 0);
  const fetcher = createUndiciFetcher();
  afterAll(async () => {
    await fetcher.close();
    await (await started).close();
  });
  const read = (query: string) => JSON.stringify({ query });

  it('gets each read again alone, and every read after that alone too', async () => {
    const refusals: number[] = [];
    const batcher = createReadBatcher({ url: `${(await started).url}/graphql`, fetcher, maxAnswerBytes: 1024 * 1024, windowMs: 5, onRefused: (status) => refusals.push(status) });
    const answers = await Promise.all(['{ a }', '{ b }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), 5, undefined)));
    expect(answers.map((answer) => JSON.parse(answer.bytes.toString('utf8')))).toEqual([{ data: { echo: '{ a }' } }, { data: { echo: '{ b }' } }]);
    expect(refusals).toEqual([400]);
    expect(batcher.batching).toBe(false);
    requests.length = 0;
    await Promise.all(['{ c }', '{ d }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), 5, undefined)));
    expect(requests.map((request) => request.batch)).toEqual([false, false]);
  });

  it('finding a batch too large (413) gets its reads alone, and still gets batches after', async () => {
    refusal = 413;
    const refusals: number[] = [];
    const batcher = createReadBatcher({ url: `${(await started).url}/graphql`, fetcher, maxAnswerBytes: 1024 * 1024, windowMs: 5, onRefused: (status) => refusals.push(status) });
    const answers = await Promise.all(['{ a }', '{ b }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), undefined, undefined)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(refusals).toEqual([]);
    expect(batcher.batching).toBe(true);
    refusal = 400;
  });

  it('gets no batch larger than its byte bound: a read that would pass it starts the next one', async () => {
    frames = everyFrame;
    requests.length = 0;
    const batcher = createReadBatcher({ url: `${(await started).url}/graphql`, fetcher, maxAnswerBytes: 1024 * 1024, maxBatchBytes: 40, windowMs: 5 });
    // Each read is 17 bytes: two fit in 40 with the brackets and the comma, a third does not.
    await Promise.all(['{ a }', '{ b }', '{ c }', '{ d }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), undefined, undefined)));
    expect(requests.map((request) => (request.batch ? (JSON.parse(request.body) as unknown[]).length : 1))).toEqual([2, 2]);
    frames = undefined;
  });

  it('with nothing in flight sends a read at once; reads that come while it is wait for the turn of the event loop, together', async () => {
    frames = everyFrame;
    requests.length = 0;
    const batcher = createReadBatcher({ url: `${(await started).url}/graphql`, fetcher, maxAnswerBytes: 1024 * 1024 });
    await Promise.all(['{ a }', '{ b }', '{ c }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), undefined, undefined)));
    expect(requests.map((request) => (request.batch ? (JSON.parse(request.body) as unknown[]).length : 1))).toEqual([1, 2]);
    // All answered, nothing is in flight: the first of the next two goes at once again, so the second goes alone.
    requests.length = 0;
    await Promise.all(['{ d }', '{ e }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), undefined, undefined)));
    expect(requests.map((request) => request.batch)).toEqual([false, false]);
    frames = undefined;
  });

  it('that answers part of a batch and then hangs is given up at the deadline: the unanswered reads fail, the answered keep their answers', async () => {
    frames = (res) => {
      res.writeHead(200, { 'content-type': READ_BATCH_TYPE });
      res.write(Buffer.concat(encodeFrame(0, 200, {}, Buffer.from('{"data":{"ok":true}}'))));
      // Never ends: only the gateway's deadline can close it.
    };
    const hurried = createUndiciFetcher({ timeoutMs: 300 });
    try {
      const batcher = createReadBatcher({ url: `${(await started).url}/graphql`, fetcher: hurried, maxAnswerBytes: 1024 * 1024, windowMs: 5 });
      const [first, second] = await Promise.allSettled(['{ a }', '{ b }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), undefined, undefined)));
      expect(first).toMatchObject({ status: 'fulfilled', value: { status: 200 } });
      expect(second).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError' } });
    } finally {
      frames = undefined;
      await hurried.close();
    }
  });

  it('that breaks its frames fails the reads it left unanswered, and answers the rest', async () => {
    frames = (res, body) => {
      res.writeHead(200, { 'content-type': READ_BATCH_TYPE });
      for (const part of encodeFrame(0, 200, {}, Buffer.from('{"data":{"ok":true}}'))) res.write(part);
      // The second read never gets its frame.
      res.end(body.length > 1 ? '' : undefined);
    };
    const batcher = createReadBatcher({ url: `${(await started).url}/graphql`, fetcher, maxAnswerBytes: 1024 * 1024, windowMs: 5 });
    const [first, second] = await Promise.allSettled(['{ a }', '{ b }'].map((query) => batcher.post({ 'content-type': 'application/json' }, read(query), undefined, undefined)));
    expect(first).toMatchObject({ status: 'fulfilled', value: { status: 200, bytes: Buffer.from('{"data":{"ok":true}}') } });
    expect(second).toMatchObject({ status: 'rejected', reason: expect.any(BrokenBatch) });
    frames = undefined;
  });
});
