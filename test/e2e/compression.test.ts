import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startGatewayOver, startTestStack } from '../support/stack.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const t = await startTestStack();
const off = await startGatewayOver(t.stack, { GATEWAY_COMPRESSION: 'off' }, 'compression-off');
const credential = { 'x-recognition-token': DEMO_TOKENS.member };
/** About 35 KB of JSON: a 100-user leaderboard (of the last 59 days, as the benchmark asks it). */
const START = new Date(Date.now() - 59 * 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
const LARGE = JSON.stringify({ query: `{ leaderboard(startDate: "${START}") { count user { id displayName username email profilePicUrl country timeZone status customProperties { name value } } } }` });
const SMALL = JSON.stringify({ query: '{ reward(id: "rw_coffee_5") { name } }' });

/** Bytes as they came over the wire (undici's `request` decodes nothing). */
async function raw(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...credential, ...headers }, body });
  return { status: response.statusCode, headers: response.headers, bytes: Buffer.from(await response.body.arrayBuffer()) };
}

describe('answers compressed for the clients that ask', () => {
  it('sends a large answer as brotli or gzip, byte for byte the plain one once decoded, on Apollo’s path and the pass-through', async () => {
    const plain = await raw(t.graphqlUrl, LARGE);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(20_000);
    for (let round = 0; round < 2; round += 1) {
      const gzip = await raw(t.graphqlUrl, LARGE, { 'accept-encoding': 'gzip' });
      expect([gzip.status, gzip.headers['content-encoding'], gzip.headers['content-length']]).toEqual([200, 'gzip', undefined]);
      expect(gunzipSync(gzip.bytes).equals(plain.bytes)).toBe(true);
      expect(gzip.bytes.length).toBeLessThan(plain.bytes.length / 4);
      const brotli = await raw(t.graphqlUrl, LARGE, { 'accept-encoding': 'gzip, deflate, br' });
      expect(brotli.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(brotli.bytes).equals(plain.bytes)).toBe(true);
      expect(String(brotli.headers.vary)).toContain('Accept-Encoding');
    }
  });

  it('leaves small answers, clients that do not ask and GATEWAY_COMPRESSION=off alone', async () => {
    const small = await raw(t.graphqlUrl, SMALL, { 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.bytes.toString())).toEqual({ data: { reward: { name: expect.any(String) } } });
    const identity = await raw(t.graphqlUrl, LARGE, { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    const switchedOff = await raw(off.graphqlUrl, LARGE, { 'accept-encoding': 'gzip, br' });
    expect(switchedOff.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(switchedOff.bytes.toString())).toMatchObject({ data: { leaderboard: expect.any(Array) } });
  });

  it('never compresses an event stream, whose events must leave at once', async () => {
    for (const accept of ['text/event-stream', 'multipart/mixed;subscriptionSpec="1.0", application/json']) {
      const response = await request(t.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, 'accept-encoding': 'gzip, br', ...credential },
        body: JSON.stringify({ query: 'subscription { bonusCreated { id } }' }),
      });
      expect(response.statusCode).toBe(200);
      // graphql-sse says `none`, so that no proxy compresses it either.
      expect([undefined, 'none']).toContain(response.headers['content-encoding']);
      // The stream's first bytes arrive uncompressed, before any event (graphql-sse's opening, multipart's heartbeat).
      const first = await new Promise<string>((resolve) => response.body.once('data', (chunk: Buffer) => resolve(chunk.toString())));
      expect(first).toMatch(/^(:|\r\n--graphql)/);
      response.body.destroy();
      await waitForEventSubscriptions(t.stack.services[0]!.subgraphUrl, 0);
    }
  });
});
