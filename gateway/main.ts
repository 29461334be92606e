import { runMain } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { startTracing } from '../lib/tracing.ts';
import { exitOnSignal } from '../lib/shutdown.ts';
import { readGatewayConfig } from './config.ts';
import { createDropChannel } from './microCacheChannel.ts';
import { startGateway } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'gateway' });
  const config = readGatewayConfig(process.env);
  const logger = createLogger({ name: 'gateway' });
  // Gateways sharing a Redis tell each other of writes, so none answers a read from what a write
  // through another made stale (docs/REPLICAS.md). Only with a micro-cache: there is nothing else to drop.
  const { redisUrl, fields } = config.microCache;
  const channel = redisUrl && fields.size ? createDropChannel(redisUrl, logger.child({ component: 'micro-cache' })) : undefined;
  const gateway = await startGateway({ ...config, microCache: { ...config.microCache, channel } }, logger);
  exitOnSignal(async () => {
    await gateway.drain(config.shutdown);
    await channel?.close();
  }, logger);
  console.log(`gateway on ${gateway.graphqlUrl}`);
});
