import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_RENDERS_PER_SECOND } from '../../lib/metricsEndpoint.ts';

/** Past this many renders in a second, `/metrics` serves its newest render again: a test reading a change needs a fresh one. */
const SPACING_MS = Math.ceil(1000 / MAX_RENDERS_PER_SECOND) + 10;
const lastScrape = new Map<string, number>();

/**
 * `/metrics` as rendered now, not a render served again: scrapes of one URL from here are spaced
 * so that they never pass the endpoint's bound (`lib/metricsEndpoint.ts`).
 */
export async function scrapeMetrics(url: string, init?: RequestInit): Promise<string> {
  const wait = (lastScrape.get(url) ?? 0) + SPACING_MS - performance.now();
  if (wait > 0) await sleep(wait);
  lastScrape.set(url, performance.now());
  return (await fetch(url, init)).text();
}
