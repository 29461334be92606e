import http from 'node:http';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../../../lib/http.ts';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { ConfigError } from '../../../lib/config.ts';
import { readDashboardsConfig } from '../../../subgraphs/dashboards/config.ts';
import { readMarketplaceConfig } from '../../../subgraphs/marketplace/config.ts';
import { createRestTransport } from '../../../subgraphs/kit/transport.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * Issue 14, item 8: a faulty upstream can neither exhaust memory nor hang a request. Bodies are
 * capped per service and refused as UPSTREAM_ERROR past the cap (never buffered past it), the
 * deadline covers every byte, and an upstream's message is cut short before it reaches a client.
 * The huge bodies are streamed by a bare server of the test's own, which counts what it managed to
 * send before the transport let go.
 */
const MiB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

type Behaviour = (res: http.ServerResponse) => void;
const behaviours = new Map<string, Behaviour>();
let sent = 0;
const server = http.createServer((req, res) => {
  const behaviour = behaviours.get(req.url!.split('?')[0]!);
  if (behaviour) behaviour(res);
  else res.writeHead(404).end();
});
const started = await listen(server, 0);
const transport = createRestTransport({ service: 'stub', baseUrl: `${started.url}/api`, timeoutMs: 2000, backoffMs: 5, maxResponseBytes: 10 * MiB, maxDownloadBytes: 20 * MiB });

afterAll(async () => {
  await transport.close();
  await started.close();
});

beforeEach(() => {
  behaviours.clear();
  sent = 0;
});

/** `total` bytes of JSON-ish text, written as fast as the reader takes them, until it lets go. */
function flood(total: number, { declare = false, status = 200 } = {}): Behaviour {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...(declare ? { 'content-length': String(total) } : {}) });
    const pump = () => {
      while (sent < total && !res.destroyed) {
        sent += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  };
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('upstream bodies over the cap', () => {
  it('refuses a 300 MB answer with no declared length as UPSTREAM_ERROR, having read little more than the cap', async () => {
    behaviours.set('/api/huge', flood(300 * MiB));
    const error = await failure(transport.request({ operation: 'huge', method: 'GET', path: '/huge' }));
    expect(error).toMatchObject({ message: expect.stringContaining(`larger than the ${10 * MiB} bytes`), extensions: { code: 'UPSTREAM_ERROR', service: 'stub', status: 200 } });
    // Socket buffers hold a few MiB more than was read; nowhere near the 300 MB.
    expect(sent).toBeLessThan(40 * MiB);
  });

  it('refuses a declared length over the cap before reading the body, and never retries it', async () => {
    let calls = 0;
    behaviours.set('/api/declared', (res) => {
      calls += 1;
      flood(600 * MiB, { declare: true })(res);
    });
    const error = await failure(transport.request({ operation: 'declared', method: 'GET', path: '/declared' }));
    expect(error).toMatchObject({ extensions: { code: 'UPSTREAM_ERROR' } });
    expect(calls).toBe(1);
    expect(sent).toBeLessThan(40 * MiB);
  });

  it('caps an error answer the same way', async () => {
    behaviours.set('/api/error', flood(300 * MiB, { status: 500 }));
    const error = await failure(transport.request({ operation: 'error', method: 'POST', path: '/error', body: { json: {} } }));
    expect(error).toMatchObject({ extensions: { code: 'UPSTREAM_ERROR' } });
    expect(sent).toBeLessThan(40 * MiB);
  });

  it('fails a streamed download once it passes its own cap, and refuses a declared one up front', async () => {
    behaviours.set('/api/pdf', flood(300 * MiB));
    const download = await transport.stream({ operation: 'pdf', method: 'GET', path: '/pdf', accept: 'application/pdf' });
    let received = 0;
    const streamed = await failure(
      (async () => {
        for await (const chunk of download.body as AsyncIterable<Buffer>) received += chunk.length;
      })(),
    );
    expect(streamed).toMatchObject({ extensions: { code: 'UPSTREAM_ERROR' } });
    expect(received).toBeLessThanOrEqual(20 * MiB);
    expect(sent).toBeLessThan(60 * MiB);

    behaviours.set('/api/pdf', flood(300 * MiB, { declare: true }));
    await expect(transport.stream({ operation: 'pdf', method: 'GET', path: '/pdf', accept: 'application/pdf' })).rejects.toMatchObject({ extensions: { code: 'UPSTREAM_ERROR' } });
  });
});

describe('the deadline over every byte', () => {
  it('cuts off a body that keeps trickling, never idle long enough for an idle timeout', async () => {
    const short = createRestTransport({ service: 'stub', baseUrl: `${started.url}/api`, timeoutMs: 300, retries: 0 });
    behaviours.set('/api/trickle', (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const timer = setInterval(() => res.write('0,'), 5);
      res.on('close', () => clearInterval(timer));
    });
    const error = await failure(short.request({ operation: 'trickle', method: 'GET', path: '/trickle' }));
    expect(error).toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    await short.close();
  });
});

describe('upstream messages', () => {
  it('cuts a 5 MB message and a flood of field errors short', async () => {
    const message = 'x'.repeat(5 * MiB);
    behaviours.set('/api/message', (res) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message })));
    const long = (await failure(transport.request({ operation: 'message', method: 'GET', path: '/message' }))) as Error;
    expect(long).toMatchObject({ extensions: { code: 'UPSTREAM_ERROR', status: 500 } });
    expect(long.message.length).toBeLessThan(600);
    expect(long.message).toContain(`cut short: ${5 * MiB} characters in all`);

    const fields = Array.from({ length: 10_000 }, (_, index) => ({ name: `field${index}`, errors: ['y'.repeat(600)] }));
    behaviours.set('/api/fields', (res) => res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ fields })));
    const many = (await failure(transport.request({ operation: 'fields', method: 'POST', path: '/fields', body: { json: {} } }))) as Error & { extensions: { code: string; fieldErrors: { field: string; messages: string[] }[] } };
    expect(many.extensions.code).toBe('BAD_USER_INPUT');
    expect(many.extensions.fieldErrors).toHaveLength(51);
    expect(many.extensions.fieldErrors.at(-1)).toEqual({ field: '…', messages: ['9950 more field errors'] });
    expect(JSON.stringify(many.extensions).length + many.message.length).toBeLessThan(50_000);
  });
});

const t = await startTestStack({ RECOGNITION_MAX_RESPONSE_BYTES: '4096' });
const emulator = t.emulator('recognition');

describe('the cap is a setting per service', () => {
  it('answers UPSTREAM_ERROR for a recognition answer over RECOGNITION_MAX_RESPONSE_BYTES, the rest of the answer intact', async () => {
    await emulator.reset();
    await emulator.fault({ path: '/api/v1/rewards/big', status: 200, body: { id: 'big', name: 'n'.repeat(8192) } });
    const result = await t.gql('{ big: reward(id: "big") { id } small: redemption(id: "rd_001") { id } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } });
    expect(result.data).toEqual({ big: null, small: { id: 'rd_001' } });
    expect(result.errors).toMatchObject([{ path: ['big'], extensions: { code: 'UPSTREAM_ERROR', service: 'recognition', status: 200 } }]);
  });

  it('reads <SERVICE>_MAX_RESPONSE_BYTES for each service (10 MiB by default) and MARKETPLACE_MAX_DOWNLOAD_BYTES (100 MiB)', () => {
    expect(readMarketplaceConfig({ MARKETPLACE_MAX_DOWNLOAD_BYTES: '2048' }).upstreamLimits).toEqual({ maxResponseBytes: 10 * MiB, maxDownloadBytes: 2048 });
    expect(readMarketplaceConfig({}).upstreamLimits).toEqual({ maxResponseBytes: 10 * MiB, maxDownloadBytes: 100 * MiB });
    expect(readDashboardsConfig({ DASHBOARDS_MAX_RESPONSE_BYTES: '65536' }).upstreamLimits).toEqual({ maxResponseBytes: 65536 });
    expect(() => readDashboardsConfig({ DASHBOARDS_MAX_RESPONSE_BYTES: 'lots' })).toThrow(ConfigError);
  });
});
