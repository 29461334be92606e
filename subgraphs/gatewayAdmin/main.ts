import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal, readSubgraphDrain } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readGatewayAdminConfig } from './config.ts';
import { createGatewayAdminSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'gatewayAdmin-subgraph' });
  const config = readGatewayAdminConfig(process.env);
  const logger = createLogger({ name: 'gatewayAdmin-subgraph' });
  const shutdown = readSubgraphDrain(process.env);
  const { url, drain } = await startSubgraph(createGatewayAdminSubgraph(config, logger), config);
  exitOnSignal(() => drain(shutdown), logger);
  console.log(`gatewayAdmin subgraph on ${url}/graphql (admin interface ${config.apiUrl})`);
});
