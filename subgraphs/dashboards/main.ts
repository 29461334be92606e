import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal, readSubgraphDrain } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readDashboardsConfig } from './config.ts';
import { createDashboardsSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'dashboards-subgraph' });
  const config = readDashboardsConfig(process.env);
  const logger = createLogger({ name: 'dashboards-subgraph' });
  const shutdown = readSubgraphDrain(process.env);
  const { url, drain } = await startSubgraph(createDashboardsSubgraph(config, logger), config);
  exitOnSignal(() => drain(shutdown), logger);
  console.log(`dashboards subgraph on ${url}/graphql (upstream ${config.apiUrl})`);
});
