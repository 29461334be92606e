import { Redis } from 'ioredis';
import { createClock } from '../../emulators/kit/emulator.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readMarketplaceConfig } from '../../subgraphs/marketplace/config.ts';
import { createMarketplaceSubgraph } from '../../subgraphs/marketplace/server.ts';
import { testLogger } from './logs.ts';
import { closeAfterFile } from './afterFile.ts';
import { startTestStack } from './stack.ts';

/**
 * A stack whose marketplace subgraph keeps label links in `redisUrl`, a second marketplace replica
 * on the same Redis that never saw the links being made, one clock for both, and a Redis client to
 * look at what they stored. Everything closes after the suite.
 */
export async function startMarketplaceRedisReplicas(redisUrl: string, downloadTtlMs: number) {
  const clock = createClock();
  const env = { REDIS_URL: redisUrl, MARKETPLACE_DOWNLOAD_TTL_MS: String(downloadTtlMs) };
  const t = await startTestStack(env, { now: () => clock.now() });
  const emulator = t.emulator('marketplace');
  const replica = await startSubgraph(createMarketplaceSubgraph(readMarketplaceConfig(env, { apiUrl: emulator.url, port: 0 }), testLogger('marketplace-replica'), { now: () => clock.now() }), { port: 0 });
  closeAfterFile(() => replica.close());
  const inspect = new Redis(redisUrl);
  closeAfterFile(() => inspect.quit());
  return { clock, t, emulator, replica, inspect };
}
