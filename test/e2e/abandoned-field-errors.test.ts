import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnMain, type SpawnedMain } from '../support/mainProcess.ts';
import { waitUntil } from '../support/waitFor.ts';

// graphql-js 16 leaves a list item's promise unawaited when a later item of a non-null type fails at
// once; its rejection would end the process (lib/abandonedFieldErrors.ts). A real subgraph main,
// its own process, spoken to over HTTP.

const started: SpawnedMain[] = [];
afterAll(() => {
  for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function startListsMain(): Promise<SpawnedMain & { url: string }> {
  const main = spawnMain(['--import', 'tsx', 'test/support/abandonedListMain.ts'], { ...process.env, LOG_LEVEL: 'warn' });
  started.push(main);
  let url: string | undefined;
  await waitUntil(() => (url = /listening on (\S+)/.exec(main.output())?.[1]) !== undefined || main.child.exitCode !== null, () => `the main to listen: ${main.output()}`, 20_000);
  if (!url) throw new Error(`the main exited: ${main.output()}`);
  return Object.assign(main, { url });
}

const post = (url: string, query: string) => fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
const alive = (main: SpawnedMain) => main.child.exitCode === null && main.child.signalCode === null;

describe('a field error graphql-js stopped awaiting', () => {
  it('is dropped: the subgraph answers the list\'s error, lives on and says so once', { timeout: 30_000 }, async () => {
    const main = await startListsMain();
    // Twice: the second drop is counted, not written.
    for (let run = 0; run < 2; run += 1) {
      const response = await post(main.url, 'mutation { makeItems { id } }');
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: unknown; errors: { path: unknown[] }[] };
      expect(body.data).toBeNull();
      // The item that failed at once, as the subgraph words graphql-js's own errors.
      expect(body.errors).toMatchObject([{ path: ['makeItems', 1, 'id'] }]);
      // The first item's call fails 20 ms later, its promise unawaited.
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(alive(main), main.output()).toBe(true);
    }
    expect((await fetch(`${main.url}/health`)).status).toBe(200);
    const notes = main
      .output()
      .split('\n')
      .filter((line) => line.includes('graphql-js had stopped awaiting'));
    expect(notes).toHaveLength(1);
    expect(JSON.parse(notes[0]!)).toMatchObject({ level: 40, name: 'graphql-execution', dropped: 1, lastPath: 'makeItems.0' });
    // Its message is not repeated: it may quote a service's answer.
    expect(main.output()).not.toContain('the service failed late');
  });

  it('is the only rejection dropped: any other unhandled one still ends the process', { timeout: 30_000 }, async () => {
    const main = await startListsMain();
    const exited = once(main.child, 'exit');
    // Answered before the rejection ends the process (or not, if the process is already going).
    await post(main.url, '{ bug }').catch(() => undefined);
    const [code] = (await exited) as [number | null];
    expect(code).toBe(1);
    expect(main.output()).toContain('a rejection nobody handles');
  });
});
