import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startRecognitionEmulator, startRecognitionGateway, startRecognitionSubgraph } from '../support/recognitionPieces.ts';
import { subscribeSse, subscribeWs } from '../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';

const SECRET = 'resilience-secret-2b4d6f8a0c';
knownSecrets.add(SECRET);
const emulator = await startRecognitionEmulator();
let subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRET });
const gateway = await startRecognitionGateway(subgraph.graphqlUrl);
afterAll(async () => {
  await gateway.close();
  await subgraph.close();
  await emulator.close();
});

const member = { 'x-recognition-token': DEMO_TOKENS.member };
const giveBonus = async () => ((await emulator.control.control('bonuses', {})) as { bonus: { id: string } }).bonus.id;
const bonusIds = (results: { data?: Record<string, unknown> | null }[]) => results.map((result) => (result.data!.bonusCreated as { bonus: { id: string } }).bonus.id);
const webhooks = async () => (await (await fetch(`${emulator.url}/api/v1/webhooks?access_token=${DEMO_TOKENS.admin}`)).json()) as { id: string; url: string }[];

describe('subscriptions across a subgraph restart', () => {
  it('lose nothing and repeat nothing', async () => {
    const query = 'subscription { bonusCreated { bonus { id } } }';
    const overWs = subscribeWs(gateway.graphqlUrl, query, { connectionParams: member });
    const overSse = subscribeSse(gateway.graphqlUrl, query, { headers: member });
    try {
      await waitForEventSubscriptions(subgraph.graphqlUrl, 1);
      const first = await giveBonus();
      await overWs.waitFor(1);

      // The subgraph goes away; a bonus is given while it is down; the service retries its delivery.
      const port = subgraph.port;
      await subgraph.close();
      const second = await giveBonus();
      subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRET, port });
      await waitUntil(async () => ((await (await fetch(`${emulator.url}/__emulator/deliveries`)).json()) as { state: string }[]).every((delivery) => delivery.state === 'delivered'), () => 'the redelivery');
      const third = await giveBonus();
      const fourth = await giveBonus();

      for (const subscription of [overWs, overSse]) {
        expect(bonusIds(await subscription.waitFor(4))).toEqual([first, second, third, fourth]);
      }
      // One more event, to be sure nothing was queued twice behind the four.
      const fifth = await giveBonus();
      for (const subscription of [overWs, overSse]) {
        expect(bonusIds(await subscription.waitFor(5))).toEqual([first, second, third, fourth, fifth]);
        expect(subscription.results).toHaveLength(5);
      }
    } finally {
      overWs.close();
      overSse.close();
    }
  });

  it('registers the webhook idempotently: a restart with the same secret changes nothing, a new secret updates it', async () => {
    expect(await webhooks()).toHaveLength(1);
    const [before] = await webhooks();
    const port = subgraph.port;
    await subgraph.close();
    subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: SECRET, port });
    expect(await webhooks()).toEqual([before]);

    const rotated = 'rotated-secret-9f7e5d3c1b';
    knownSecrets.add(rotated);
    await subgraph.close();
    subgraph = await startRecognitionSubgraph(emulator.url, { webhookSecret: rotated, port });
    const after = await webhooks();
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(before!.id);
    expect(after[0]!.url).toMatch(new RegExp(`/webhooks/recognition/${rotated}$`));
  });
});
