import crypto from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createRestTransport, type RestCall } from '../../subgraphs/kit/transport.ts';
import { createUpstreamPacer } from '../../subgraphs/kit/pacing.ts';
import { createCallScope } from '../../subgraphs/kit/callScope.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import { SYSTEM_CLOCK } from '../../lib/deadlines.ts';
import { knownSecrets, testLogger } from '../support/logs.ts';

// The connection gate and the pacer tell callers apart by one key, a keyed hash of the caller's
// credential made once per request: the pacer made its own on every call. Counted at
// node:crypto, over a real server on port 0.

const API_KEY = 'pacing-caller-key-api-key-5e1d7c3b';
const OTHER_KEY = 'pacing-caller-key-other-key-9a4f2e6c';
for (const secret of [API_KEY, OTHER_KEY]) knownSecrets.add(secret);

const arrived: string[] = [];
const server = createServer((req, res) => {
  req.resume();
  arrived.push(`${req.url} ${req.headers['x-api-key']}`);
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const transport = createRestTransport({
  service: 'marketplace',
  baseUrl,
  timeoutMs: 5000,
  logger: testLogger('marketplace'),
  pace: createUpstreamPacer({ service: 'marketplace', rates: PUBLISHED_RATES.marketplace!, settings: { enabled: true, sharePercent: 100, maxQueue: 100 }, clock: SYSTEM_CLOCK }),
});
afterAll(async () => {
  await transport.close();
  await new Promise((resolve) => server.close(resolve));
});

const product = (key: string, id: number, scope: RestCall['scope']): RestCall => ({ operation: 'product', method: 'GET', path: `/products/${id}`, headers: { 'x-api-key': key }, secrets: [key], ...(scope ? { scope } : {}) });

describe('the caller\'s key', () => {
  it('is made once per request and credential, for the gate and the pacer alike', async () => {
    const hashes = vi.spyOn(crypto, 'hash');
    syncBuiltinESMExports();
    try {
      const scope = createCallScope({ budget: 100, signal: new AbortController().signal });
      // Five product reads of one request: under the 9 a second of the products class, none waits.
      await Promise.all([1, 2, 3, 4, 5].map((id) => transport.request(product(API_KEY, id, scope))));
      expect(hashes).toHaveBeenCalledTimes(1);
      // Another credential in the same request is another caller, with a key of its own.
      await transport.request(product(OTHER_KEY, 6, scope));
      expect(hashes).toHaveBeenCalledTimes(2);
    } finally {
      hashes.mockRestore();
      syncBuiltinESMExports();
    }
    expect(arrived).toHaveLength(6);
  });
});
