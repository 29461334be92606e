import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_APIKEY, OTHER_APIKEY, TEAMMATE_APIKEY } from '../../emulators/imports/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startImportsSlice } from '../support/importsPieces.ts';
import { subscribeWs, subscribeSse } from '../support/subscribers.ts';
import { DIALECTS } from '../support/stack.ts';
import { waitUntil } from '../support/waitFor.ts';

const { emulator, subgraph, gateway } = await startImportsSlice();
const control = emulator.control;
const auth = { 'x-imports-apikey': DEMO_APIKEY };
const WATCH = 'subscription ($id: ID!) { importStatusChanged(id: $id) { id status statusText final messages } }';

/** Jobs finish when a test moves the emulator's clock, never because real time passed. */
const PROCESSING_MS = 600_000;
beforeEach(async () => {
  await control.reset();
  await control.control('processing', { ms: PROCESSING_MS });
});

async function createImport(file: string, extra: Record<string, unknown> = {}): Promise<string> {
  const result = await gateway.gql<{ createImport: { id: string } }>('mutation ($input: CreateImportInput!) { createImport(input: $input) { id } }', {
    variables: { input: { apiId: 'api_1001', fileLocation: emulator.file(file), ...extra } },
    headers: auth,
  });
  expect(result.errors).toBeUndefined();
  return result.data!.createImport.id;
}

const polls = async (id: string) => (await control.requests()).filter((request) => request.method === 'GET' && request.path === `/v1/imports/${id}`).length;
/**
 * Moves the subgraph's poller clock and waits until the poll it causes reached the emulator and
 * the poller has handled it (and so set its next timer).
 */
async function pollOnce(id: string, advanceMs: number): Promise<void> {
  const before = await polls(id);
  const ticks = await subgraph.gauge('imports_status_ticks');
  subgraph.clock.advance(advanceMs);
  await waitUntil(async () => (await polls(id)) > before && (await subgraph.gauge('imports_status_ticks')) > ticks, () => `a poll of ${id}`);
}
const statusesOf = (results: { data?: Record<string, unknown> | null }[]) => results.map((result) => (result.data?.importStatusChanged as { status: string }).status);

describe.each(DIALECTS)('importStatusChanged, %s dialect', (dialect) => {
  beforeEach(async () => {
    await control.dialect(dialect);
  });

  it('sends the status at once, then the change once the job is done, and completes', async () => {
    const id = await createImport('petstore.json');
    await control.clearRequests();
    const watcher = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await watcher.waitFor(1);
    expect(watcher.results[0]).toEqual({ data: { importStatusChanged: { id, status: 'IN_PROGRESS', statusText: 'in_progress', final: false, messages: [] } } });

    // Nothing changed: a poll after the first second, and nothing sent.
    await pollOnce(id, 1000);
    await control.control('clock', { advanceMs: PROCESSING_MS });
    // The wait doubled after a poll that saw no change.
    expect(subgraph.clock.nextDueIn()).toBe(2000);
    await pollOnce(id, 2000);
    await watcher.ended;
    expect(statusesOf(watcher.results)).toEqual(['IN_PROGRESS', 'COMPLETED']);
    expect(watcher.results[1]!.data!.importStatusChanged).toMatchObject({ final: true, messages: [expect.stringMatching(/^Imported 2 paths/)] });
    // One read to check the subscriber's key, then the poller's: three in all.
    expect(await polls(id)).toBe(3);
    await waitUntil(async () => (await subgraph.gauge('imports_status_watches')) === 0, () => 'the watch to end');
  });

  it('reads a padded, capitalised "Completed " as final, so the subscription completes', async () => {
    const id = await createImport('petstore.json');
    const watcher = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await watcher.waitFor(1);
    await control.control(`imports/${id}`, { status: 'Completed ' });
    await pollOnce(id, 1000);
    await watcher.waitFor(2);
    expect(watcher.results[1]!.data!.importStatusChanged).toMatchObject({ status: 'COMPLETED', statusText: 'Completed ', final: true });
    await watcher.ended;
    const read = await gateway.gql<{ import: { status: string; final: boolean } }>('query ($id: ID!) { import(id: $id) { status final } }', { variables: { id }, headers: auth });
    expect(read.data!.import).toEqual({ status: 'COMPLETED', final: true });
    await waitUntil(async () => (await subgraph.gauge('imports_status_watches')) === 0, () => 'the watch to end');
  });

  it('sees a broken description fail with the parser’s messages (over SSE too)', async () => {
    const id = await createImport('broken.yaml');
    const overWs = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    const overSse = subscribeSse(gateway.graphqlUrl, WATCH, { variables: { id }, headers: auth });
    await overWs.waitFor(1);
    await overSse.waitFor(1);
    await control.control('clock', { advanceMs: PROCESSING_MS });
    await pollOnce(id, 1000);
    await Promise.all([overWs.ended, overSse.ended]);
    for (const watcher of [overWs, overSse]) {
      expect(statusesOf(watcher.results)).toEqual(['IN_PROGRESS', 'FAILED']);
      const failed = watcher.results[1]!.data!.importStatusChanged as { messages: string[]; final: boolean };
      expect(failed.final).toBe(true);
      expect(failed.messages).toEqual(expect.arrayContaining(['Swagger schema validation failed.', "#/info must have required property 'version'"]));
    }
  });

  it('sends one final status and completes at once for a job that is already over', async () => {
    const id = await createImport('no-base-path.yaml');
    await control.control('clock', { advanceMs: PROCESSING_MS });
    const watcher = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await watcher.ended;
    expect(statusesOf(watcher.results)).toEqual(['FAILED']);
    expect((watcher.results[0]!.data!.importStatusChanged as { messages: string[] }).messages[0]).toContain('names no base path');
    expect(await subgraph.gauge('imports_status_watches')).toBe(0);
  });

  it('polls once per tick for 50 subscribers of one import, and stops when the last one leaves', async () => {
    const id = await createImport('orders.yaml');
    // Distinct operations, so the gateway opens 50 subscriptions on the subgraph (identical ones would share one).
    const watchers = Array.from({ length: 50 }, (_, index) =>
      subscribeWs(gateway.graphqlUrl, `subscription ($id: ID!) { w${index}: importStatusChanged(id: $id) { status } }`, { variables: { id }, connectionParams: auth }),
    );
    await subgraph.subscriptions(50);
    await control.clearRequests();
    await pollOnce(id, 1000);
    await pollOnce(id, 2000);
    await pollOnce(id, 4000);
    expect(await polls(id)).toBe(3);
    expect(await subgraph.gauge('imports_status_watches')).toBe(1);

    for (const watcher of watchers) watcher.close();
    await subgraph.subscriptions(0);
    await waitUntil(async () => (await subgraph.gauge('imports_status_watches')) === 0, () => 'the watch to end');
    subgraph.clock.advance(60_000);
    expect(await polls(id)).toBe(3);
    expect(watchers.every((watcher) => watcher.results.length === 1)).toBe(true);
  });

  it('gives a subscriber without a valid key for the import UNAUTHENTICATED or NOT_FOUND, and no events', async () => {
    const id = await createImport('petstore.json');
    const wrongKey = 'wrong-imports-apikey-5e6f7a8b';
    knownSecrets.add(wrongKey);
    const cases: { params: Record<string, string>; code: string }[] = [
      { params: {}, code: 'UNAUTHENTICATED' },
      { params: { 'x-imports-apikey': wrongKey }, code: 'UNAUTHENTICATED' },
      { params: { 'x-imports-apikey': OTHER_APIKEY }, code: 'NOT_FOUND' },
    ];
    for (const { params, code } of cases) {
      const watcher = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: params });
      await watcher.ended;
      expect(watcher.results.flatMap((result) => result.errors ?? []).map((error) => error.extensions?.code), JSON.stringify(params)).toEqual([code]);
      expect(watcher.results.some((result) => result.data)).toBe(false);
    }
    expect(await subgraph.gauge('imports_status_watches')).toBe(0);
  });

  it('ends the subscribers of a key the service refuses while polling, with the error', async () => {
    const id = await createImport('petstore.json');
    const watcher = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await watcher.waitFor(1);
    await control.fault({ path: `/v1/imports/${id}`, method: 'GET', status: 401, body: { errors: [{ status: 401, title: 'Unauthorized', detail: 'The API key was revoked' }] }, times: 1 });
    await pollOnce(id, 1000);
    await watcher.ended;
    expect(watcher.results).toHaveLength(2);
    expect(watcher.results[1]!.errors?.map((error) => [error.extensions?.code, error.message])).toEqual([['UNAUTHENTICATED', 'imports: The API key was revoked']]);
    await waitUntil(async () => (await subgraph.gauge('imports_status_watches')) === 0, () => 'the watch to end');
  });

  it('goes on polling with another subscriber’s key when the one it used is refused', async () => {
    const id = await createImport('petstore.json');
    const first = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await first.waitFor(1);
    const teammate = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: { 'x-imports-apikey': TEAMMATE_APIKEY } });
    await teammate.waitFor(1);
    await subgraph.subscriptions(2);
    // The poll uses the first subscriber's key; the service refuses it this once.
    await control.fault({ path: `/v1/imports/${id}`, method: 'GET', status: 401, times: 1 });
    await pollOnce(id, 1000);
    await first.ended;
    expect(first.results[1]!.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    await subgraph.subscriptions(1);
    await control.control('clock', { advanceMs: PROCESSING_MS });
    await pollOnce(id, subgraph.clock.nextDueIn()!);
    await teammate.ended;
    expect(statusesOf(teammate.results)).toEqual(['IN_PROGRESS', 'COMPLETED']);
  });

  it('waits as long as a Retry-After asks before polling again', async () => {
    const id = await createImport('petstore.json');
    const watcher = subscribeWs(gateway.graphqlUrl, WATCH, { variables: { id }, connectionParams: auth });
    await watcher.waitFor(1);
    await control.control('rate-limit', { times: 1, retryAfterSeconds: 20 });
    await pollOnce(id, 1000);
    // Backoff alone would poll again after 2 s; the service asked for 20.
    expect(subgraph.clock.nextDueIn()).toBe(20_000);
    await pollOnce(id, 20_000);
    // The answer was a plain one again: back to the backoff, doubled from the 20 s.
    expect(subgraph.clock.nextDueIn()).toBe(30_000);
    watcher.close();
  });
});
