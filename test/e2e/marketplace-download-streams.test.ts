import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { listen } from '../../lib/http.ts';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createMarketplaceEmulator } from '../../emulators/marketplace/emulator.ts';
import { closeAfterFile } from '../support/afterFile.ts';
import { startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/**
 * A label PDF link read end to end (client → gateway → subgraph → service) when the file is large,
 * the client slow, the service stalling or refusing. The service is the marketplace emulator behind
 * a proxy of the test's own, which answers the PDF itself when a test says how. The call's timeout
 * is 500 ms: a download that takes longer must still arrive whole, and a service silent that long
 * mid-body must still be cut off.
 */
const MiB = 1024 * 1024;
const TIMEOUT_MS = 500;
const CHUNK = Buffer.alloc(64 * 1024, 0x41);

const emulator = await startEmulator(createMarketplaceEmulator({ rateLimits: false }), 0);
closeAfterFile(() => emulator.close());
const upstream = new URL(emulator.url);

/** How the proxy answers the PDF; undefined passes it to the emulator. */
let pdf: ((res: http.ServerResponse) => void) | undefined;
/** Bytes of the file the proxy wrote. */
let sent = 0;
const proxy = http.createServer((req, res) => {
  if (pdf && req.url!.startsWith('/shipments/mkt/view') && (req.headers.accept ?? '').includes('pdf')) return pdf(res);
  const forwarded = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode!, answer.headers);
    answer.pipe(res);
  });
  forwarded.on('error', () => res.destroy());
  req.pipe(forwarded);
});
const proxied = await listen(proxy, 0);
closeAfterFile(() => proxied.close());

const t = await startTestStack({ MARKETPLACE_API_URL: proxied.url, MARKETPLACE_TIMEOUT_MS: String(TIMEOUT_MS), MARKETPLACE_MAX_DOWNLOAD_BYTES: String(64 * MiB) });

afterEach(() => {
  pdf = undefined;
  sent = 0;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pdfLink(): Promise<string> {
  const result = await t.gql<{ labelGroup: { labelsPdf: { url: string } } }>('{ labelGroup(id: "7001") { labelsPdf { url } } }', { headers: SELLER_HEADERS });
  expect(result.errors).toBeUndefined();
  return result.data!.labelGroup.labelsPdf.url;
}

/** `total` bytes with their length declared, written as fast as they are taken. */
function file(total: number): (res: http.ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(total) });
    let written = 0;
    const pump = () => {
      while (written < total && !res.destroyed) {
        written += CHUNK.length;
        sent += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  };
}

/** Reads the body, pausing `pauseMs` after every `every` bytes; the bytes read, and how the read ended. */
async function readSlowly(response: Response, every: number, pauseMs: number): Promise<{ received: number; error?: unknown }> {
  const reader = response.body!.getReader();
  let received = 0;
  let nextPause = every;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { received };
      received += value.length;
      if (received >= nextPause) {
        nextPause += every;
        await sleep(pauseMs);
      }
    }
  } catch (error) {
    return { received, error };
  }
}

describe('a label PDF download', () => {
  it('reaches a slow client whole, long after the call’s timeout, its pauses longer than the idle timeout', async () => {
    const total = 24 * MiB;
    pdf = file(total);
    const started = Date.now();
    const response = await fetch(await pdfLink());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(total));
    // A pause of 700 ms after every 4 MiB: the service waits on the reader longer than 500 ms each time.
    const read = await readSlowly(response, 4 * MiB, 700);
    expect(read).toEqual({ received: total });
    expect(Date.now() - started).toBeGreaterThan(6 * TIMEOUT_MS);
  });

  it('is cut off once the service is silent mid-body for the idle timeout, and the client sees the truncation', async () => {
    // A slow service, never silent for 500 ms: 256 KiB every 200 ms for 1.6 s, then nothing, the
    // declared length never reached.
    let stopped = 0;
    pdf = (res) => {
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(8 * MiB) });
      let bursts = 0;
      const timer = setInterval(() => {
        for (let i = 0; i < 4; i += 1) res.write(CHUNK);
        sent += 4 * CHUNK.length;
        if (++bursts === 8) {
          clearInterval(timer);
          stopped = Date.now();
        }
      }, 200);
      res.on('close', () => clearInterval(timer));
    };
    const response = await fetch(await pdfLink());
    expect(response.status).toBe(200);
    const read = await readSlowly(response, Infinity, 0);
    const cutAfter = Date.now() - stopped;
    expect(read.error).toBeDefined();
    // Every byte the service sent arrived, past the call's timeout; then the silence ended it.
    expect(sent).toBe(2 * MiB);
    expect(read.received).toBe(sent);
    expect(cutAfter).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(cutAfter).toBeLessThan(TIMEOUT_MS + 3000);
  });

  it('refused by the service’s rate is 429 with the service’s Retry-After, through the gateway, HEAD too', async () => {
    pdf = (res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: 'Too many requests' }));
    };
    const link = await pdfLink();
    for (const method of ['GET', 'HEAD']) {
      const response = await fetch(link, { method });
      expect(response.status, method).toBe(429);
      expect(response.headers.get('retry-after'), method).toBe('7');
    }
    expect(await (await fetch(link)).json()).toEqual({ message: 'The service allows no more downloads for this link’s owner right now. Try again shortly.' });
  });

  it('whose credential the service refuses since the link was issued is 403, which no retry fixes', async () => {
    const link = await pdfLink();
    for (const status of [401, 403]) {
      pdf = (res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'Invalid API key' }));
      };
      const response = await fetch(link);
      expect(response.status, String(status)).toBe(403);
      expect(response.headers.get('retry-after')).toBeNull();
      expect(await response.json()).toEqual({ message: 'The service no longer accepts the credential this link was issued with. Ask the graph for a new link with a current credential.' });
    }
    // Any other failure is still 502, and a file gone still 404.
    pdf = (res) => res.writeHead(500).end();
    expect((await fetch(link)).status).toBe(502);
  });

  it('is opened once at a time per link: a second reader meanwhile gets 429 with Retry-After, calling nothing upstream', async () => {
    // The service takes 300 ms to answer (a paced call waits its turn likewise): the link is being opened meanwhile.
    let calls = 0;
    pdf = (res) => {
      calls += 1;
      setTimeout(() => file(MiB)(res), 300);
    };
    const link = await pdfLink();
    const first = fetch(link);
    await expect.poll(() => calls).toBe(1);
    const second = await fetch(link);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toEqual({ message: 'This link is being opened by another download right now. Try again in a moment.' });
    expect(calls).toBe(1);
    expect((await first).status).toBe(200);
    // Its body still streaming, the link opens again.
    const third = await fetch(link);
    expect(third.status).toBe(200);
    expect(calls).toBe(2);
    expect((await (await first).arrayBuffer()).byteLength).toBe(MiB);
    expect((await third.arrayBuffer()).byteLength).toBe(MiB);
  });
});
