import { beforeEach, describe, expect, it } from 'vitest';
import { SEEDED_NUMBERS } from '../../emulators/messaging/data.ts';
import { DEMO_STORE_ID, messagingOf } from '../support/messagingPieces.ts';
import { startTestStack } from '../support/stack.ts';
import { waitUntil } from '../support/waitFor.ts';

/**
 * The spec's subscriber table, row by row: the trigger acts through the gateway (or a handset text
 * through the emulator), the state after is read through the gateway, and the emulator tells which
 * texts went out and which status callbacks it posted.
 */
const t = await startTestStack({ MESSAGING_EMULATOR_RETRY_MS: '20' });
const m = messagingOf(t);

beforeEach(async () => {
  await m.emulator.reset();
});

async function statusOf(mobileId: string): Promise<string | null> {
  const result = await m.gql<{ subscriber: { status: string } | null }>('query($s: ID!, $n: String!) { subscriber(storeId: $s, mobileId: $n) { status } }', { s: DEMO_STORE_ID, n: mobileId });
  expect(result.errors).toBeUndefined();
  return result.data!.subscriber?.status ?? null;
}

async function sendOptIn(mobileId: string, type: 'SINGLE' | 'DOUBLE') {
  const result = await m.gql<{ sendOptIn: { messageId: string } }>('mutation($s: ID!, $n: String!, $t: OptInType!) { sendOptIn(input: { storeId: $s, mobileId: $n, type: $t }) { messageId } }', { s: DEMO_STORE_ID, n: mobileId, t: type });
  // Every opt-in is accepted synchronously: refusals come later, as status callbacks.
  expect(result.errors).toBeUndefined();
  return result.data!.sendOptIn.messageId;
}

async function sendOptOut(mobileId: string) {
  const result = await m.gql<{ sendOptOut: { messageId: string | null; message: string } }>('mutation($s: ID!, $n: String!) { sendOptOut(storeId: $s, mobileId: $n) { messageId message } }', { s: DEMO_STORE_ID, n: mobileId });
  expect(result.errors).toBeUndefined();
  return result.data!.sendOptOut;
}

const textsTo = async (mobileId: string) => (await m.messages()).filter((message) => message.to === mobileId).map((message) => message.kind);
const statusCallbacks = async () => (await m.deliveries()).filter((delivery) => delivery.webhookId === `${DEMO_STORE_ID}:status`);
/** The status callbacks the emulator posted, once all are delivered to the subgraph. */
async function deliveredStatusCallbacks(count: number) {
  await waitUntil(async () => (await statusCallbacks()).filter((delivery) => delivery.state === 'delivered').length === count, () => `${count} status callbacks delivered`);
  return statusCallbacks();
}

describe('the subscriber state machine', () => {
  it('pending + reply YES -> Opted-In, the confirmation sent, a status callback', async () => {
    expect(await statusOf(SEEDED_NUMBERS.pending)).toBe('PENDING');
    expect((await m.text(SEEDED_NUMBERS.pending, 'YES')).handled).toBe('confirm');
    expect(await statusOf(SEEDED_NUMBERS.pending)).toBe('OPTED_IN');
    expect(await textsTo(SEEDED_NUMBERS.pending)).toEqual(['confirmation']);
    expect(await deliveredStatusCallbacks(1)).toHaveLength(1);
  });

  it('pending + reply Y (any case) -> Opted-In', async () => {
    await m.text(SEEDED_NUMBERS.pending, ' y ');
    expect(await statusOf(SEEDED_NUMBERS.pending)).toBe('OPTED_IN');
    expect(await textsTo(SEEDED_NUMBERS.pending)).toEqual(['confirmation']);
  });

  it.each(['NO', 'N'])('double opt-in request outstanding + reply %s -> Opted-Out, no text, a status callback', async (reply) => {
    await sendOptIn('15556660001', 'DOUBLE');
    expect(await statusOf('15556660001')).toBe('PENDING');
    await m.text('15556660001', reply);
    expect(await statusOf('15556660001')).toBe('OPTED_OUT');
    expect(await textsTo('15556660001')).toEqual(['request']);
    // One for the request sent, one for the decline.
    expect(await deliveredStatusCallbacks(2)).toHaveLength(2);
  });

  it.each([
    ['Opted-Out', SEEDED_NUMBERS.optedOut, 'OPTED_OUT'],
    ['pending', SEEDED_NUMBERS.pending, 'PENDING'],
  ])('%s + Send Opt-In single -> unchanged, refused asynchronously by a status callback, no text', async (_state, mobileId, status) => {
    await sendOptIn(mobileId, 'SINGLE');
    expect(await statusOf(mobileId)).toBe(status);
    expect(await textsTo(mobileId)).toEqual([]);
    expect(await deliveredStatusCallbacks(1)).toHaveLength(1);
  });

  it.each(['SINGLE', 'DOUBLE'] as const)('locked + Send Opt-In %s -> unchanged (blocked), refused by a status callback, no text', async (type) => {
    await sendOptIn(SEEDED_NUMBERS.locked, type);
    expect(await statusOf(SEEDED_NUMBERS.locked)).toBe('LOCKED');
    expect(await textsTo(SEEDED_NUMBERS.locked)).toEqual([]);
    expect(await deliveredStatusCallbacks(1)).toHaveLength(1);
  });

  it('Opted-In + Send Opt-Out -> Opted-Out, the opt-out confirmation sent, the short code released, a status callback', async () => {
    const before = await m.gql<{ subscriber: { shortCode: string } }>('query($s: ID!) { subscriber(storeId: $s, mobileId: "15550000001") { shortCode } }', { s: DEMO_STORE_ID });
    expect(before.data!.subscriber.shortCode).toBe('33733');
    const out = await sendOptOut(SEEDED_NUMBERS.optedIn);
    expect(out.messageId).toEqual(expect.any(String));
    const after = await m.gql('query($s: ID!) { subscriber(storeId: $s, mobileId: "15550000001") { status shortCode } }', { s: DEMO_STORE_ID });
    expect(after.data).toEqual({ subscriber: { status: 'OPTED_OUT', shortCode: null } });
    expect(await textsTo(SEEDED_NUMBERS.optedIn)).toEqual(['stop']);
    expect(await deliveredStatusCallbacks(1)).toHaveLength(1);
  });

  it('Opted-Out + Send Opt-Out -> Opted-Out, answered synchronously, no text, no callback', async () => {
    const out = await sendOptOut(SEEDED_NUMBERS.optedOut);
    expect(out).toEqual({ messageId: null, message: 'Subscriber is already opted out' });
    expect(await statusOf(SEEDED_NUMBERS.optedOut)).toBe('OPTED_OUT');
    expect(await textsTo(SEEDED_NUMBERS.optedOut)).toEqual([]);
    // The emulator registers a callback the moment it decides to send one: none was.
    expect(await statusCallbacks()).toEqual([]);
  });

  it('a double opt-in left unanswered three times locks the number at the fourth', async () => {
    const number = '15556660009';
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await sendOptIn(number, 'DOUBLE');
      expect(await statusOf(number)).toBe('PENDING');
    }
    await sendOptIn(number, 'DOUBLE');
    expect(await statusOf(number)).toBe('LOCKED');
    expect(await textsTo(number)).toEqual(['request', 'request', 'request']);
    expect(await deliveredStatusCallbacks(4)).toHaveLength(4);
    // Locked blocks every opt-in from then on.
    await sendOptIn(number, 'SINGLE');
    expect(await statusOf(number)).toBe('LOCKED');
  });

  it('a new number + Send Opt-In single -> Opted-In with the confirmation; double -> pending with the request', async () => {
    await sendOptIn('15556660011', 'SINGLE');
    await sendOptIn('15556660012', 'DOUBLE');
    expect([await statusOf('15556660011'), await statusOf('15556660012')]).toEqual(['OPTED_IN', 'PENDING']);
    expect([await textsTo('15556660011'), await textsTo('15556660012')]).toEqual([['confirmation'], ['request']]);
  });

  it('a handset texting an opt-in keyword is opted in (single opt-in, handset initiated), and STOP opts it out', async () => {
    expect((await m.text('15556660021', 'bread')).handled).toBe('opt-in');
    expect(await statusOf('15556660021')).toBe('OPTED_IN');
    expect((await m.text('15556660021', 'STOP')).handled).toBe('stop');
    expect(await statusOf('15556660021')).toBe('OPTED_OUT');
    expect(await textsTo('15556660021')).toEqual(['confirmation', 'stop']);
  });

  it('a pending number texting STOP is opted out too', async () => {
    expect((await m.text(SEEDED_NUMBERS.pending, 'stop')).handled).toBe('stop');
    expect(await statusOf(SEEDED_NUMBERS.pending)).toBe('OPTED_OUT');
    expect(await textsTo(SEEDED_NUMBERS.pending)).toEqual(['stop']);
  });
});
