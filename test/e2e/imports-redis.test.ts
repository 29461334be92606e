import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_APIKEY } from '../../emulators/imports/data.ts';
import { startRedis } from '../support/redisServer.ts';
import { startImportsEmulator, startImportsGateway, startImportsSubgraph } from '../support/importsPieces.ts';
import { subscribeWs, type Collected } from '../support/subscribers.ts';
import { waitUntil } from '../support/waitFor.ts';

const redis = await startRedis();
const emulator = await startImportsEmulator();
// Jobs change only when a test forces a status, never because real time passed.
await emulator.control.control('processing', { ms: 3_600_000 });
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await emulator.close();
  await redis.close();
});

const auth = { 'x-imports-apikey': DEMO_APIKEY };
const WATCH = 'subscription ($id: ID!) { importStatusChanged(id: $id) { status statusText } }';

/** A subgraph replica on the shared Redis, with its own clock and its own gateway. */
async function startReplica(settings: { leaseMs?: number } = {}) {
  const subgraph = await startImportsSubgraph(emulator.url, { redisUrl: redis.url, ...settings });
  const gateway = await startImportsGateway(subgraph.graphqlUrl);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await gateway.close();
    await subgraph.close();
  };
  closers.push(stop);
  return { subgraph, gateway, stop };
}
type Replica = Awaited<ReturnType<typeof startReplica>>;

async function createImport(replica: Replica): Promise<string> {
  const result = await replica.gateway.gql<{ createImport: { id: string } }>('mutation ($input: CreateImportInput!) { createImport(input: $input) { id } }', {
    variables: { input: { apiId: 'api_1001', fileLocation: emulator.file('petstore.json') } },
    headers: auth,
  });
  expect(result.errors).toBeUndefined();
  return result.data!.createImport.id;
}

const polls = async (id: string) => (await emulator.control.requests()).filter((request) => request.method === 'GET' && request.path === `/v1/imports/${id}`).length;
const statusTexts = (watcher: Collected) => watcher.results.map((result) => (result.data?.importStatusChanged as { statusText: string }).statusText);

/** Fires the replica's next poller timer and waits until that wake-up is handled (a poll, or a lease it did not get). */
async function tick(replica: Replica): Promise<{ polled: boolean }> {
  const [ticks, before] = [await replica.subgraph.gauge('imports_status_ticks'), await replica.subgraph.gauge('imports_status_polls')];
  replica.subgraph.clock.advance(replica.subgraph.clock.nextDueIn()!);
  await waitUntil(async () => (await replica.subgraph.gauge('imports_status_ticks')) > ticks, () => 'a poller wake-up');
  return { polled: (await replica.subgraph.gauge('imports_status_polls')) > before };
}

describe('one poller per import across replicas (Redis lease)', () => {
  it('polls once between two replicas, shares what it sees, and the survivor takes over when the holder stops', async () => {
    const [a, b] = [await startReplica(), await startReplica()];
    const id = await createImport(a);
    const onA = subscribeWs(a.gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    const onB = subscribeWs(b.gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await onA.waitFor(1);
    await onB.waitFor(1);
    await emulator.control.clearRequests();

    expect(await tick(a)).toEqual({ polled: true });
    expect(await tick(b)).toEqual({ polled: false });
    expect(await tick(a)).toEqual({ polled: true });
    expect(await tick(b)).toEqual({ polled: false });
    expect(await polls(id)).toBe(2);

    // A change the holder sees reaches the other replica's subscribers without a poll of its own.
    await emulator.control.control(`imports/${id}`, { status: 'validating' });
    expect(await tick(a)).toEqual({ polled: true });
    await onB.waitFor(2);
    expect(statusTexts(onB)).toEqual(['in_progress', 'validating']);
    expect(await b.subgraph.gauge('imports_status_polls')).toBe(0);

    // The holder stops (and gives its lease up): the other replica polls from its next wake-up.
    await a.stop();
    expect(await tick(b)).toEqual({ polled: true });
    await emulator.control.control(`imports/${id}`, { status: 'completed', message: 'Imported 2 paths' });
    expect(await tick(b)).toEqual({ polled: true });
    await onB.ended;
    expect(statusTexts(onB)).toEqual(['in_progress', 'validating', 'completed']);
    expect(await polls(id)).toBe(5);
    onA.close();
    await b.stop();
  });

  it('replaces a holder that stops renewing without giving its lease up, once the lease runs out', async () => {
    const [c, d] = [await startReplica({ leaseMs: 300 }), await startReplica({ leaseMs: 300 })];
    const id = await createImport(c);
    const onC = subscribeWs(c.gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    const onD = subscribeWs(d.gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await onC.waitFor(1);
    await onD.waitFor(1);
    expect(await tick(c)).toEqual({ polled: true });
    // C's clock never moves again: it neither polls nor renews, as if hung or dead. D keeps trying at each wake-up.
    await waitUntil(async () => (await tick(d)).polled, () => 'the other replica to take the lease over');
    await emulator.control.control(`imports/${id}`, { status: 'failed', message: 'broken' });
    expect(await tick(d)).toEqual({ polled: true });
    await onD.ended;
    expect(statusTexts(onD)).toEqual(['in_progress', 'failed']);
    onC.close();
  });
});
