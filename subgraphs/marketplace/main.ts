import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal, readSubgraphDrain } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readMarketplaceConfig } from './config.ts';
import { createMarketplaceSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'marketplace-subgraph' });
  const config = readMarketplaceConfig(process.env);
  const logger = createLogger({ name: 'marketplace-subgraph' });
  const shutdown = readSubgraphDrain(process.env);
  const { url, drain } = await startSubgraph(createMarketplaceSubgraph(config, logger), config);
  exitOnSignal(() => drain(shutdown), logger);
  console.log(`marketplace subgraph on ${url}/graphql (upstream ${config.apiUrl}, marketplace "${config.marketplace}")`);
});
