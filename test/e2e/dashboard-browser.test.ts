import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { knownSecrets } from '../support/logs.ts';
import { browserAvailable, launchBrowser } from '../support/browser.ts';
import { startRecognitionEmulator, startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const SECRET = 'dashboard-secret-5c7e9a1b3d';
knownSecrets.add(SECRET);

describe.skipIf(!browserAvailable())('the live dashboard in Chromium', () => {
  let emulator: Awaited<ReturnType<typeof startRecognitionEmulator>>;
  let subgraph: Awaited<ReturnType<typeof startRecognitionSubgraph>>;
  let gateway: Awaited<ReturnType<typeof startRecognitionGateway>>;
  let browser: Browser;
  const startGatewayAt = (port: number) =>
    startRecognitionGateway(subgraph.graphqlUrl, { port, dashboard: true, sandboxHeaders: { 'x-recognition-token': DEMO_TOKENS.member } });

  beforeAll(async () => {
    emulator = await startRecognitionEmulator();
    subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRET });
    gateway = await startGatewayAt(0);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await subgraph?.close();
    await emulator?.close();
  });

  const giveBonus = async (body: Record<string, unknown> = {}) =>
    ((await emulator.control.control('bonuses', body)) as { bonus: { id: string } }).bonus.id;
  /** Event ids are the bonus ids' events; the feed shows bonuses, so read the reason each one carries. */
  const feedReasons = (page: Page) => page.locator('#feed li').evaluateAll((items) => items.map((item) => item.querySelector('p + p')?.textContent ?? ''));
  const openDashboard = async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${gateway.url}/dashboard`);
    await expect.poll(() => page.locator('#status').getAttribute('data-state')).toBe('connected');
    return page;
  };

  it('prefills the demo credential and shows a bonus within a second of its webhook', async () => {
    const page = await openDashboard();
    expect(await page.locator('#token').inputValue()).toBe(DEMO_TOKENS.member);
    // The credential is kept in the tab's session storage, never in the address.
    expect(page.url()).not.toContain(DEMO_TOKENS.member);
    expect(await page.evaluate(() => (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('recognition-dashboard-token'))).toBe(DEMO_TOKENS.member);

    await waitForEventSubscriptions(subgraph.graphqlUrl, 2);
    await giveBonus({ hashtag: '#shipit', reason: 'first light', amount: 7 });
    const item = page.locator('#feed li').first();
    await item.waitFor({ timeout: 1000 });
    await expect.poll(() => item.textContent()).toContain('first light');
    expect(await item.textContent()).toContain('+7');
    expect(await item.textContent()).toContain('#shipit');
    // The leaderboard and trends are read by query and refreshed on arrival.
    await expect.poll(() => page.locator('#trends tr').count()).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#leaderboard li').count()).toBeGreaterThan(0);

    await emulator.control.control('achievements', { title: 'Team player', headline: 'Kim earned an achievement' });
    await expect.poll(() => page.locator('#achievements li').first().textContent()).toContain('Team player');
    await page.close();
  });

  it('filters by hashtag with the keyboard alone, and re-subscribes with the filter', async () => {
    const page = await openDashboard();
    await page.locator('#hashtag').focus();
    await page.keyboard.type('#kudos');
    await page.keyboard.press('Enter');
    await expect.poll(() => feedReasons(page)).toEqual([]);

    await giveBonus({ hashtag: '#other', reason: 'not for this view' });
    await giveBonus({ hashtag: '#kudos', reason: 'for this view' });
    await expect.poll(() => feedReasons(page)).toEqual(['for this view']);

    // Show all again: what was given before stays hidden (the view resumes after its last event), new ones come in.
    await page.locator('#clear-filter').click();
    await giveBonus({ hashtag: '#other', reason: 'after clearing' });
    await expect.poll(() => feedReasons(page)).toEqual(['after clearing', 'for this view']);
    await page.close();
  });

  it('resumes after the subgraph and then the gateway restart, without a gap or a duplicate', async () => {
    const page = await openDashboard();
    // 'connected' is the page's socket to the gateway: the subscriptions reach the subgraph after it.
    await waitForEventSubscriptions(subgraph.graphqlUrl, 2);
    await giveBonus({ reason: 'r1' });
    await expect.poll(() => feedReasons(page)).toEqual(['r1']);

    // The subgraph goes away; a bonus given meanwhile is redelivered by the service once it is back.
    const subgraphPort = subgraph.port;
    await subgraph.close();
    await giveBonus({ reason: 'r2' });
    subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRET, port: subgraphPort });
    await giveBonus({ reason: 'r3' });
    await expect.poll(() => feedReasons(page), { timeout: 10_000 }).toEqual(['r3', 'r2', 'r1']);

    // The gateway goes away: the page says so, reconnects with backoff and resumes from its last cursor.
    const gatewayPort = Number(new URL(gateway.url).port);
    await gateway.close();
    await expect.poll(() => page.locator('#status').getAttribute('data-state')).toBe('reconnecting');
    await giveBonus({ reason: 'r4' });
    gateway = await startGatewayAt(gatewayPort);
    await expect.poll(() => page.locator('#status').getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');
    await giveBonus({ reason: 'r5' });
    await expect.poll(() => feedReasons(page), { timeout: 10_000 }).toEqual(['r5', 'r4', 'r3', 'r2', 'r1']);
    expect(await page.locator('#feed li').evaluateAll((items) => new Set(items.map((item) => item.getAttribute('data-event-id'))).size)).toBe(5);

    const screenshots = process.env.UPDATE_SCREENSHOTS ? join(import.meta.dirname, '..', '..', 'docs') : mkdtempSync(join(tmpdir(), 'dashboard-'));
    await emulator.control.control('achievements', { title: 'Team player', headline: 'A week of kudos' });
    await expect.poll(() => page.locator('#achievements li').count()).toBeGreaterThan(0);
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.screenshot({ path: join(screenshots, 'dashboard.png'), fullPage: true });
    await page.close();
  });

  it('shows a refused credential as refused, not as an endless spinner', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${gateway.url}/dashboard`);
    await page.locator('#token').fill('not-a-real-token-0000');
    await page.locator('#token').press('Enter');
    await expect.poll(() => page.locator('#status').getAttribute('data-state')).toBe('error');
    expect(await page.locator('#status').textContent()).toContain('UNAUTHENTICATED');
    await context.close();
  });

  it('serves the Sandbox landing page with the demo headers preset (its scripts come from a CDN, so the served HTML is what is checked)', async () => {
    const page = await browser.newPage();
    const response = await page.goto(gateway.graphqlUrl, { waitUntil: 'commit' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toContain('text/html');
    const html = await response!.text();
    expect(html).toContain('x-recognition-token');
    expect(html).toContain(DEMO_TOKENS.member);
    expect(html).toContain('embeddable-sandbox');
    await page.close();
  });

  it('is off in production unless asked for', async () => {
    expect(readGatewayConfig({ NODE_ENV: 'production' }).dashboard).toBe(false);
    expect(readGatewayConfig({ NODE_ENV: 'production', DASHBOARD: 'on' }).dashboard).toBe(true);
    expect(readGatewayConfig({}).dashboard).toBe(true);
    const production = await startRecognitionGateway(subgraph.graphqlUrl, { dashboard: false });
    try {
      expect((await fetch(`${production.url}/dashboard`)).status).toBe(404);
    } finally {
      await production.close();
    }
  });
});
