import { beforeEach, describe, expect, it } from 'vitest';
import { createClock } from '../../emulators/kit/emulator.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/**
 * QA14 finding 3: the label PDF links of one process were one pool of 10,000, oldest out, so any
 * marketplace caller could cut another's link short by asking for links in bulk. The clock is the
 * test's: a link's lifetime is checked without sleeping.
 */
const TTL_MS = 300_000;
const clock = createClock();
const t = await startTestStack({ MARKETPLACE_DOWNLOAD_TTL_MS: String(TTL_MS) }, { now: () => clock.now() });
const emulator = t.emulator('marketplace');

/** Two credentials the emulator accepts, so two callers as far as the graph can tell. */
const victim = SELLER_HEADERS;
const attacker = { 'x-marketplace-user-token': DEMO_CREDENTIALS.userToken, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey };

/** The process-wide bound the store had (and keeps): enough links to have filled it. */
const STORE_BOUND = 10_000;

beforeEach(async () => {
  clock.reset();
  await emulator.reset();
});

async function victimLink(): Promise<{ url: string; expiresAt: number }> {
  const result = await t.gql<{ labelGroup: { labelsPdf: { url: string; expiresAt: string } } }>('{ labelGroup(id: "7001") { labelsPdf { url expiresAt } } }', { headers: victim });
  expect(result.errors).toBeUndefined();
  const { url, expiresAt } = result.data!.labelGroup.labelsPdf;
  expect((await fetch(url)).status).toBe(200);
  return { url, expiresAt: Date.parse(expiresAt) };
}

/** The clock also runs on its own (it is the wall clock moved by the test): moves it to `at`, whatever has passed. */
const moveClockTo = (at: number) => clock.advance(at - clock.now());

async function expectPdf(url: string): Promise<void> {
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  expect(response.status, body.toString('utf8').slice(0, 200)).toBe(200);
  expect(body.toString('latin1').startsWith('%PDF-1.4')).toBe(true);
}

/** Runs `task` for 0..count-1, `width` at a time. */
async function inParallel(count: number, width: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) await task(next++);
  }));
}

describe('label PDF links of one caller against another’s requests', () => {
  it('outlive 50 requests of 100 aliased labelsPdf on every label group by another credential (the QA14 repro)', async () => {
    const { url: link, expiresAt } = await victimLink();
    const aliases = Array.from({ length: 100 }, (_, index) => `p${index}: labelsPdf { url }`).join(' ');
    const urls = new Set<string>();
    let issued = 0;
    for (let request = 0; request < 50; request++) {
      const result = await t.gql<{ labelGroups: Record<string, { url: string } | string>[] }>(`{ labelGroups { id ${aliases} } }`, { headers: attacker });
      expect(result.errors).toBeUndefined();
      for (const group of result.data!.labelGroups) {
        for (const [field, value] of Object.entries(group)) {
          if (field === 'id' || typeof value === 'string') continue;
          urls.add(value.url);
          issued++;
        }
      }
    }
    expect(issued).toBe(STORE_BOUND);
    moveClockTo(expiresAt - TTL_MS + 50_000);
    await expectPdf(link);
    // The link lives its whole documented lifetime, and no longer.
    moveClockTo(expiresAt - 1_000);
    await expectPdf(link);
    moveClockTo(expiresAt + 1_000);
    expect((await fetch(link)).status).toBe(410);
    // The same caller asking for the same group is handed the link it already holds: 100 aliases
    // on two groups in 50 requests stood for two links, not ten thousand.
    expect(urls.size).toBe(2);
  });

  it('outlive a flood of links asked for under e-mails made up beside one user token: one owner, which loses its own oldest links', async () => {
    // Ten more label groups, so each request stands for twelve links.
    for (let order = 2007; order <= 2016; order++) {
      const grouped = await t.gql(`mutation { groupOrders(orderCodes: ["ORD-${order}"]) { id } }`, { headers: victim });
      expect(grouped.errors).toBeUndefined();
    }
    const { url: link, expiresAt } = await victimLink();
    // The marketplace does not read the e-mail beside a user token: enough e-mails to fill the
    // store, were each its own owner.
    const callers = Math.ceil((STORE_BOUND * 1.2) / 12);
    const answered: string[][] = [];
    await inParallel(callers, 16, async (caller) => {
      const result = await t.gql<{ labelGroups: { labelsPdf: { url: string } }[] }>('{ labelGroups { labelsPdf { url } } }', {
        headers: { ...attacker, 'x-marketplace-email': `flood-${caller}@example.com` },
      });
      expect(result.errors).toBeUndefined();
      answered[caller] = result.data!.labelGroups.map((group) => group.labelsPdf.url);
    });
    expect(answered.flat()).toHaveLength(callers * 12);
    moveClockTo(expiresAt - 1_000);
    await expectPdf(link);
    // One owner, held to its own bound: its first links went, its last stay.
    expect((await fetch(answered[0]![0]!, { method: 'HEAD' })).status).toBe(404);
    expect((await fetch(answered.at(-1)![11]!, { method: 'HEAD' })).status).toBe(200);
  }, 120_000);
});
