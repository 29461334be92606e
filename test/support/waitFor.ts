/** Polls until `check` holds; fails with `describe()` after `timeoutMs`. Waits for behaviour, never asserts timing. */
export async function waitUntil(check: () => boolean | Promise<boolean>, describe: () => string = () => 'condition', timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves once nothing listens at `origin` any more. */
export function refusesConnections(origin: string, timeoutMs = 20_000): Promise<void> {
  return waitUntil(
    async () => {
      try {
        await fetch(`${origin}/health`);
        return false;
      } catch {
        return true;
      }
    },
    () => `${origin} to refuse new connections`,
    timeoutMs,
  );
}

/** Waits until a subgraph has `count` subscriptions following its event log. */
export async function waitForEventSubscriptions(subgraphUrl: string, count: number, metric = 'recognition_event_subscriptions'): Promise<void> {
  let seen = -1;
  await waitUntil(
    async () => {
      const metrics = await (await fetch(subgraphUrl.replace(/\/graphql$/, '/metrics'))).text();
      seen = Number(new RegExp(`^${metric} (\\d+)`, 'm').exec(metrics)?.[1] ?? -1);
      return seen === count;
    },
    () => `${count} event subscriptions on ${subgraphUrl} (saw ${seen})`,
  );
}
