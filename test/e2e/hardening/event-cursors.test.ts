import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { startTestStack } from '../../support/stack.ts';
import { subscribeWs, type Collected } from '../../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../../support/waitFor.ts';

/**
 * Event cursors are not signed (docs/EVENTS.md, part 3), so what a client writes in one is checked
 * on the way in. A position past the log's newest event was once followed as given: the stream
 * skipped every live event until the log caught up with it, silent and open.
 */
const t = await startTestStack({ RECOGNITION_EMULATOR_RETRY_MS: '20' });
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services[0]!.subgraphUrl;
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const open: Collected[] = [];

afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(subgraphUrl, 0);
});

const subscribe = (after?: string) => {
  const subscription = subscribeWs(t.graphqlUrl, 'subscription ($after: String) { bonusCreated(after: $after) { cursor bonus { id } } }', { connectionParams: member, variables: after === undefined ? {} : { after } });
  open.push(subscription);
  return subscription;
};
const giveBonus = () => emulator.control('bonuses', {}) as Promise<{ bonus: { id: string } }>;
const positionOf = (cursor: string) => (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p: string }).p;
const cursorAt = (cursor: string, p: unknown) => Buffer.from(JSON.stringify({ ...(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as object), p })).toString('base64url');

/** A cursor the graph issued, for a real event. */
async function issuedCursor(): Promise<string> {
  const live = subscribe();
  await waitForEventSubscriptions(subgraphUrl, 1);
  await giveBonus();
  const [event] = await live.waitFor(1);
  live.close();
  await waitForEventSubscriptions(subgraphUrl, 0);
  return (event!.data!.bonusCreated as { cursor: string }).cursor;
}

describe('an event cursor written by hand', () => {
  it('refuses a position past the newest event as BAD_USER_INPUT naming `after`', async () => {
    const cursor = await issuedCursor();
    const [epoch, sequence] = positionOf(cursor).split(':');
    const ahead = subscribe(cursorAt(cursor, `${epoch}:${Number(sequence) + 1000}`));
    const [result] = await ahead.waitFor(1);
    expect(result!.errors?.[0]).toMatchObject({ message: expect.stringContaining('ahead of the newest event'), extensions: { code: 'BAD_USER_INPUT', argument: 'after' } });
  });

  it('refuses a position of no form the log writes', async () => {
    const cursor = await issuedCursor();
    for (const p of [{ a: 1 }, null, 'x', '0:1', `${positionOf(cursor)}:1`]) {
      const forged = subscribe(cursorAt(cursor, p));
      const [result] = await forged.waitFor(1);
      expect(result!.errors?.[0]?.extensions, JSON.stringify(p)).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'after' });
    }
  });

  it('still resumes from the newest event, and from a position of another process (replaying what this one holds)', async () => {
    const cursor = await issuedCursor();
    const fromNewest = subscribe(cursor);
    const fromElsewhere = subscribe(cursorAt(cursor, 'deadbeef:1'));
    // Its replay in means its stream is open; the two may share one by then.
    await fromElsewhere.waitFor(1);
    const { bonus } = await giveBonus();
    const newest = await fromNewest.waitFor(1);
    expect(newest.map((result) => (result.data!.bonusCreated as { bonus: { id: string } }).bonus.id)).toEqual([bonus.id]);
    // Every bonus this process holds (each issued cursor's), then the new one.
    const idOf = (result: (typeof fromElsewhere.results)[number]) => (result.data?.bonusCreated as { bonus: { id: string } } | undefined)?.bonus.id;
    await waitUntil(() => fromElsewhere.results.some((result) => idOf(result) === bonus.id));
    expect(fromElsewhere.results.length).toBeGreaterThan(1);
    expect(fromElsewhere.results.every((result) => !result.errors)).toBe(true);
    expect(idOf(fromElsewhere.results.at(-1)!)).toBe(bonus.id);
  });
});
