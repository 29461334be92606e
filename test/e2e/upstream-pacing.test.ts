import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Started } from '../../lib/http.ts';
import { startEmulator, type EmulatorClock, type LoggedRequest } from '../../emulators/kit/emulator.ts';
import { createMarketplaceEmulator } from '../../emulators/marketplace/emulator.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { createMessagingEmulator } from '../../emulators/messaging/emulator.ts';
import { DEMO_TOKEN as MESSAGING_TOKEN, OTHER_TOKEN as MESSAGING_OTHER_TOKEN } from '../../emulators/messaging/data.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readMarketplaceConfig } from '../../subgraphs/marketplace/config.ts';
import { createMarketplaceSubgraph } from '../../subgraphs/marketplace/server.ts';
import { readMessagingConfig } from '../../subgraphs/messaging/config.ts';
import { createMessagingSubgraph } from '../../subgraphs/messaging/server.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import { emulatorControl, type GraphQLResult } from '../support/stack.ts';
import { testLogger } from '../support/logs.ts';

/**
 * The subgraphs pace their calls under the services' published rates, which the emulators enforce
 * as the real services do (429 past them). Each test arranges through the emulator's control
 * surface, acts on a subgraph over HTTP, and reads the emulator's request log: no 429, and the
 * log's own timestamps show the rate held.
 */

const closers: Started[] = [];
afterAll(async () => {
  for (const started of closers.reverse()) await started.close();
});
const keep = <T extends Started>(started: T) => {
  closers.push(started);
  return started;
};

/**
 * A clock that stands still: every request reaches the emulator at the same instant, so which
 * requests it refuses does not depend on how fast this machine sends them.
 */
function frozenClock(): EmulatorClock {
  let now = Date.parse('2026-11-23T12:00:00Z');
  return { now: () => now, advance: (ms) => void (now += ms), reset: () => {} };
}

const marketplaceEmulator = keep(await startEmulator(createMarketplaceEmulator(), 0));
const marketplace = emulatorControl(marketplaceEmulator.url);
const frozenMarketplaceEmulator = keep(await startEmulator(createMarketplaceEmulator({ clock: frozenClock() }), 0));
const frozenMarketplace = emulatorControl(frozenMarketplaceEmulator.url);

async function marketplaceSubgraph(apiUrl: string, env: Record<string, string> = {}) {
  const config = readMarketplaceConfig(env, { apiUrl, port: 0, host: '127.0.0.1' });
  return keep(await startSubgraph(createMarketplaceSubgraph(config, testLogger('marketplace-subgraph')), config)).url;
}
const paced = await marketplaceSubgraph(marketplaceEmulator.url);
const pacedWithShortDeadline = await marketplaceSubgraph(marketplaceEmulator.url, { MARKETPLACE_TIMEOUT_MS: '1000' });
const unpaced = await marketplaceSubgraph(frozenMarketplaceEmulator.url, { UPSTREAM_PACING: 'off' });

const seller = { 'x-marketplace-email': DEMO_CREDENTIALS.email, 'x-marketplace-api-key': DEMO_CREDENTIALS.apiKey, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };
const sellerByToken = { 'x-marketplace-user-token': DEMO_CREDENTIALS.userToken, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };

async function gql(url: string, query: string, headers: Record<string, string>): Promise<GraphQLResult> {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });
  return (await response.json()) as GraphQLResult;
}

/** `count` product lookups in one operation, each its own `GET /products/{sku}`. */
const productReads = (count: number, from = 1) =>
  `{ ${Array.from({ length: count }, (_, index) => `p${index}: product(sku: "SKU-${String(from + index).padStart(4, '0')}") { sku }`).join(' ')} }`;

const times = (entries: readonly LoggedRequest[]) => entries.map((entry) => Date.parse(entry.at)).sort((a, b) => a - b);
/** The most requests the log shows in any window of `windowMs`. */
const busiestWindow = (at: readonly number[], windowMs = 1000) => Math.max(0, ...at.map((from) => at.filter((t) => t >= from && t < from + windowMs).length));

const products = PUBLISHED_RATES.marketplace!.classes.find((rateClass) => rateClass.name === 'products')!;

describe('marketplace: 9 requests a second on products', () => {
  beforeEach(async () => {
    await marketplace.reset();
    await frozenMarketplace.reset();
  });

  it('the emulator refuses past the rate as the service does: 429, its error body, Retry-After', async () => {
    const headers = { 'x-user-email': DEMO_CREDENTIALS.email, 'x-api-key': DEMO_CREDENTIALS.apiKey, 'x-accountmanager-key': DEMO_CREDENTIALS.accountKey, accept: 'application/json' };
    // "Other endpoints": one a second.
    expect((await fetch(`${frozenMarketplace.url}/status_types`, { headers })).status).toBe(200);
    const refused = await fetch(`${frozenMarketplace.url}/freights`, { headers });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ errors: [expect.stringMatching(/too many requests/i)] });
    await frozenMarketplace.dialect('real');
    const real = await fetch(`${frozenMarketplace.url}/questions?platform=ALPHA`, { headers });
    expect(real.status).toBe(429);
    expect(await real.json()).toEqual({ error: expect.stringMatching(/too many requests/i) });
  });

  it('without pacing, a burst of 20 product reads meets 429s: RATE_LIMITED from the upstream', async () => {
    const result = await gql(unpaced, productReads(20), seller);
    const log = await frozenMarketplace.requests();
    expect(log.filter((entry) => entry.status === 429)).toHaveLength(20 - products.requests);
    expect(result.errors?.length).toBe(20 - products.requests);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', service: 'marketplace', status: 429, retryAfterSeconds: 1 });
  });

  it('paced, the same burst is served whole with no 429, at the published rate', async () => {
    const result = await gql(paced, productReads(20), seller);
    expect(result.errors).toBeUndefined();
    expect(Object.values(result.data ?? {})).toHaveLength(20);
    expect(Object.values(result.data ?? {}).every((product) => product !== null)).toBe(true);

    const log = await marketplace.requests();
    expect(log.map((entry) => entry.status)).toEqual(Array(20).fill(200));
    const at = times(log);
    expect(busiestWindow(at)).toBeLessThanOrEqual(products.requests);
    // Nine at once, nine a window later, two after that.
    expect(at[products.requests - 1]! - at[0]!).toBeLessThan(products.perMs);
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(2 * products.perMs);

    const metrics = await (await fetch(`${paced}/metrics`)).text();
    expect(metrics).toMatch(/marketplace_upstream_paced_total\{service="marketplace",class="products"\} 11/);
    expect(metrics).toMatch(/marketplace_upstream_pacing_wait_seconds_count\{service="marketplace",class="products"\} 11/);
    for (const secret of [DEMO_CREDENTIALS.apiKey, DEMO_CREDENTIALS.accountKey, DEMO_CREDENTIALS.email]) expect(metrics).not.toContain(secret);
  });

  it('paces two credentials on their own', async () => {
    const [first, second] = await Promise.all([gql(paced, productReads(12, 1), seller), gql(paced, productReads(12, 13), sellerByToken)]);
    expect(first.errors).toBeUndefined();
    expect(second.errors).toBeUndefined();

    const log = await marketplace.requests();
    expect(log.filter((entry) => entry.status !== 200)).toEqual([]);
    const byKey = times(log.filter((entry) => entry.headers.includes('x-api-key')));
    const byToken = times(log.filter((entry) => entry.headers.includes('x-user-token')));
    expect([byKey.length, byToken.length]).toEqual([12, 12]);
    expect(busiestWindow(byKey)).toBeLessThanOrEqual(products.requests);
    expect(busiestWindow(byToken)).toBeLessThanOrEqual(products.requests);
    // Each credential had its own nine at once: neither waited for the other's.
    expect(busiestWindow(times(log))).toBeGreaterThan(products.requests);
  });

  it('refuses at once, without calling upstream, the calls whose turn would come after the deadline', async () => {
    const result = await gql(pacedWithShortDeadline, productReads(20), seller);
    // Nine go at once; the tenth's turn is a window later, past the 1000 ms deadline.
    expect(result.errors).toHaveLength(20 - products.requests);
    for (const error of result.errors ?? []) {
      expect(error.extensions).toMatchObject({ code: 'RATE_LIMITED', service: 'marketplace', retryAfterSeconds: 1 });
      expect(error.extensions?.status).toBeUndefined();
    }
    expect(Object.values(result.data ?? {}).filter((product) => product !== null)).toHaveLength(products.requests);
    const log = await marketplace.requests();
    expect(log.map((entry) => entry.status)).toEqual(Array(products.requests).fill(200));

    const metrics = await (await fetch(`${pacedWithShortDeadline}/metrics`)).text();
    expect(metrics).toMatch(/marketplace_upstream_pacing_refused_total\{service="marketplace",class="products",reason="deadline"\} 11/);
  });

  it('paces retries too', async () => {
    await marketplace.fault({ path: '/products/*', status: 503, times: products.requests });
    const result = await gql(paced, productReads(products.requests), seller);
    expect(result.errors).toBeUndefined();

    const log = await marketplace.requests();
    expect(log.map((entry) => entry.status)).toEqual([...Array(products.requests).fill(503), ...Array(products.requests).fill(200)]);
    const at = times(log);
    expect(busiestWindow(at)).toBeLessThanOrEqual(products.requests);
    // The retries, due after 25-75 ms of backoff, waited for the next window.
    expect(at[products.requests]! - at[0]!).toBeGreaterThanOrEqual(products.perMs);
  });
});

const messagingEmulator = keep(await startEmulator(createMessagingEmulator(), 0));
const messaging = emulatorControl(messagingEmulator.url);
const frozenMessagingEmulator = keep(await startEmulator(createMessagingEmulator({ clock: frozenClock() }), 0));
const messagingConfig = readMessagingConfig({}, { apiUrl: messagingEmulator.url, port: 0, host: '127.0.0.1' });
const messagingSubgraph = keep(await startSubgraph(await createMessagingSubgraph(messagingConfig, testLogger('messaging-subgraph')), messagingConfig)).url;

describe('messaging: 100 requests a second per account', () => {
  const rate = PUBLISHED_RATES.messaging!.classes[0]!;

  /** `count` lookups of distinct numbers, each its own `GET /subscriber/status/{mobileId}`. */
  const numberReads = (count: number, from: number) =>
    `{ ${Array.from({ length: count }, (_, index) => `n${index}: mobileNumber(mobileId: "1555${String(from + index).padStart(7, '0')}") { mobileId }`).join(' ')} }`;

  beforeEach(() => messaging.reset());

  it('the emulator answers the 101st request of a second with 429 and a fail body', async () => {
    const headers = { authorization: `Bearer ${MESSAGING_OTHER_TOKEN}` };
    const answers = await Promise.all(Array.from({ length: rate.requests + 1 }, () => fetch(`${frozenMessagingEmulator.url}/subscriber/status/15550000001`, { headers })));
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.headers.get('retry-after')).toBe('1');
    expect(await refused[0]!.json()).toEqual({ status: 'fail', code: 429, message: 'Too many requests', results: [] });
    await Promise.all(answers.filter((answer) => !answer.bodyUsed).map((answer) => answer.body?.cancel()));
  });

  it('paces 150 calls of one account with no 429', async () => {
    const headers = { 'x-messaging-token': MESSAGING_TOKEN };
    const results = await Promise.all([gql(messagingSubgraph, numberReads(75, 0), headers), gql(messagingSubgraph, numberReads(75, 75), headers)]);
    for (const result of results) expect(result.errors).toBeUndefined();

    const log = await messaging.requests();
    expect(log).toHaveLength(150);
    expect(log.filter((entry) => entry.status === 429)).toEqual([]);
    const at = times(log);
    expect(busiestWindow(at)).toBeLessThanOrEqual(rate.requests);
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(rate.perMs);
  });
});
