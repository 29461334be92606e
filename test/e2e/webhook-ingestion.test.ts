import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeWs, type Collected } from '../support/subscribers.ts';
import { waitForEventSubscriptions } from '../support/waitFor.ts';

const SECRET = 'ingestion-secret-5a7c9e1b3d';
knownSecrets.add(SECRET);
const t = await startTestStack({ RECOGNITION_WEBHOOK_SECRET: SECRET, RECOGNITION_WEBHOOK_MAX_BYTES: '4096' });
const subgraph = t.stack.services[0]!.subgraphUrl.replace(/\/graphql$/, '');
const receiver = `${subgraph}/webhooks/recognition/${SECRET}`;
const open: Collected[] = [];
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await waitForEventSubscriptions(`${subgraph}/graphql`, 0);
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const bonusDelivery = (id: string, extra: Record<string, unknown> = {}) => ({
  id: `evt_${id}`,
  type: 'bonus.created',
  created_at: '2026-11-22T10:00:00Z',
  data: {
    id,
    created_at: '2026-11-22T10:00:00Z',
    reason: '+5 for the docs #kindness',
    amount: '5',
    amount_with_currency: '5 points',
    value: '#kindness',
    giver: { id: 'usr_001', display_name: 'Ada Lovelace', department: 'Engineering' },
    receivers: [{ id: 'usr_002', display_name: 'Bo Diaz' }],
    ...extra,
  },
});

async function subscribed() {
  const subscription = subscribeWs(t.graphqlUrl, 'subscription { bonusCreated { id bonus { id amount hashtag giver { displayName customProperties { name value } } } } }', {
    connectionParams: { 'x-recognition-token': DEMO_TOKENS.member },
  });
  open.push(subscription);
  await waitForEventSubscriptions(`${subgraph}/graphql`, open.length);
  return subscription;
}

describe('webhook ingestion', () => {
  it('registers its own webhook at start, and never shows the secret', async () => {
    const result = await t.gql<{ webhooks: { url: string; eventTypes: string[] }[] }>('{ webhooks { url eventTypes } }', { headers: { 'x-recognition-token': DEMO_TOKENS.admin } });
    expect(result.data!.webhooks).toEqual([{ url: `${subgraph}/webhooks/recognition/[REDACTED]`, eventTypes: ['BONUS_CREATED', 'ACHIEVEMENT_EVENT_CREATED'] }]);
  });

  it('accepts a delivery with unknown fields, reads numbers sent as text, and answers 202', async () => {
    const subscription = await subscribed();
    const response = await post(receiver, bonusDelivery('bon_ext_1', { family_amount: 10, brand_new_field: { nested: true } }));
    expect(response.status).toBe(202);
    const [result] = await subscription.waitFor(1);
    expect(result!.data).toEqual({
      bonusCreated: { id: 'bonus.created:bon_ext_1', bonus: { id: 'bon_ext_1', amount: 5, hashtag: '#kindness', giver: { displayName: 'Ada Lovelace', customProperties: [{ name: 'department', value: 'Engineering' }] } } },
    });
  });

  it('drops a redelivery: nobody receives an event twice', async () => {
    const subscription = await subscribed();
    expect((await post(receiver, bonusDelivery('bon_dup'))).status).toBe(202);
    const again = await post(receiver, bonusDelivery('bon_dup'));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ accepted: true, duplicate: true });
    expect((await post(receiver, bonusDelivery('bon_after_dup'))).status).toBe(202);
    const results = await subscription.waitFor(2);
    expect(results.map((result) => (result.data!.bonusCreated as { id: string }).id)).toEqual(['bonus.created:bon_dup', 'bonus.created:bon_after_dup']);
  });

  it('refuses a wrong or missing secret with 401 and stores nothing', async () => {
    const subscription = await subscribed();
    for (const url of [`${subgraph}/webhooks/recognition/not-the-secret`, `${subgraph}/webhooks/recognition`, `${subgraph}/webhooks/recognition/`]) {
      const response = await post(url, bonusDelivery('bon_forged'));
      expect(response.status).toBe(401);
      expect(JSON.stringify(await response.json())).not.toContain(SECRET);
    }
    // The forged bonus was not stored: a genuine delivery of the same id is new, and is the only event.
    expect((await post(receiver, bonusDelivery('bon_forged'))).status).toBe(202);
    expect((await subscription.waitFor(1))[0]!.data).toMatchObject({ bonusCreated: { id: 'bonus.created:bon_forged' } });
  });

  it('refuses an oversize body with 413, an unknown event type and broken JSON with 400', async () => {
    const huge = await post(receiver, bonusDelivery('bon_huge', { reason: 'x'.repeat(8000) }));
    expect(huge.status).toBe(413);
    const unknown = await post(receiver, { id: 'evt_x', type: 'bonus.deleted', data: { id: 'b' } });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({ error: 'unknown event type "bonus.deleted"' });
    expect((await post(receiver, { data: { id: 'b' } })).status).toBe(400);
    expect((await post(receiver, '{"type": "bonus.created", ')).status).toBe(400);
  });

  it('reads a user that is no object, or has no id, as absent: never a user "undefined"', async () => {
    const subscription = subscribeWs(t.graphqlUrl, 'subscription { bonusCreated { bonus { id giver { id } receivers { id displayName } } } }', { connectionParams: { 'x-recognition-token': DEMO_TOKENS.member } });
    open.push(subscription);
    await waitForEventSubscriptions(`${subgraph}/graphql`, open.length);
    const broken = bonusDelivery('bon_broken_users', { giver: [1, 2], receivers: [null, { name: 'no id' }, { id: null }, 7, { id: 'usr_002', display_name: 'Bo Diaz' }] });
    expect((await post(receiver, broken)).status).toBe(202);
    expect((await post(receiver, bonusDelivery('bon_numeric_giver', { giver: 7, receivers: [] }))).status).toBe(202);
    const [first, second] = await subscription.waitFor(2);
    expect(first!.data).toEqual({ bonusCreated: { bonus: { id: 'bon_broken_users', giver: null, receivers: [{ id: 'usr_002', displayName: 'Bo Diaz' }] } } });
    expect(second!.data).toEqual({ bonusCreated: { bonus: { id: 'bon_numeric_giver', giver: null, receivers: [] } } });
  });

  it('takes an achievement delivered with the entity at the top level', async () => {
    const subscription = subscribeWs(t.graphqlUrl, 'subscription { achievementEarned { achievement { id title importance receiver { id } } } }', { connectionParams: { 'x-recognition-token': DEMO_TOKENS.member } });
    open.push(subscription);
    await waitForEventSubscriptions(`${subgraph}/graphql`, open.length);
    const response = await post(receiver, { event_type: 'achievement_event.created', achievement: { id: 'ach_1', title: 'Mentor', importance: '2', bonus_id: 'bon_ext_1', receiver: { id: 'usr_002' } } });
    expect(response.status).toBe(202);
    expect((await subscription.waitFor(1))[0]!.data).toEqual({ achievementEarned: { achievement: { id: 'ach_1', title: 'Mentor', importance: 2, receiver: { id: 'usr_002' } } } });
  });
});
