import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { composeWithKudos, startKudosSubgraph } from '../support/kudosSubgraph.ts';
import { testLogger } from '../support/logs.ts';
import { startRoundRobinProxy } from '../support/roundRobinProxy.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeWs } from '../support/subscribers.ts';
import { waitForEventSubscriptions, waitUntil } from '../support/waitFor.ts';

// The gateway executes a stream's events one after another. When its stream to the subgraph drops
// while events it has received still wait their turn, it resumes from the last event it received,
// not the last it executed: else the subgraph sends the waiting ones again, and every subscriber
// gets them twice.

const t = await startTestStack();
const emulator = t.emulator('recognition');
const subgraphUrl = t.stack.services[0]!.subgraphUrl;
// Each event's execution waits 150 ms on the kudos subgraph, so events queue in the gateway.
const kudos = await startKudosSubgraph({ lookupMs: 150 });
const proxy = await startRoundRobinProxy();
proxy.setBackends([new URL(subgraphUrl).origin]);
const throughProxy = `${proxy.url}${new URL(subgraphUrl).pathname}`;
const gateway = await startGateway(
  readGatewayConfig({}, { port: 0, supergraphSdl: composeWithKudos(throughProxy, kudos.graphqlUrl), subgraphUrls: { recognition: throughProxy, kudos: kudos.graphqlUrl } }),
  testLogger('resume-queued-gateway'),
);
afterAll(async () => {
  await gateway.close();
  await proxy.close();
  await kudos.close();
});

const giveBonus = () => emulator.control('bonuses', { hashtag: 'queued' }) as Promise<{ bonus: { id: string } }>;

describe('a stream to the subgraph that drops while received events wait to be executed', () => {
  it('resumes after the last event received: each event reaches the subscriber once, in order', { timeout: 20_000 }, async () => {
    const subscriber = subscribeWs(gateway.graphqlUrl, 'subscription { bonusCreated(filter: { hashtag: "queued" }) { bonus { id celebration } } }', { connectionParams: { 'x-recognition-token': DEMO_TOKENS.member } });
    try {
      await waitForEventSubscriptions(subgraphUrl, 1);
      const given: string[] = [];
      for (let index = 0; index < 5; index += 1) given.push((await giveBonus()).bonus.id);
      // All five reached the gateway (the subgraph sent them), the first is executing, the rest wait.
      await subscriber.waitFor(1);
      expect(subscriber.results.length).toBeLessThan(5);
      proxy.cutTunnels();
      await subscriber.waitFor(5);
      // The stream resumed (a new tunnel), and anything it would send twice has had time to come.
      await waitUntil(() => proxy.openTunnels().length === 1, () => 'the gateway to resume its stream');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const delivered = subscriber.results.map((result) => (result.data?.bonusCreated as { bonus: { id: string } }).bonus.id);
      expect(delivered).toEqual(given);
      expect(kudos.lookups).toEqual(given);
    } finally {
      subscriber.close();
    }
  });
});
