import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readGatewayAdminConfig } from './config.ts';
import { createGatewayAdminSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'gatewayAdmin-subgraph' });
  const config = readGatewayAdminConfig(process.env);
  const logger = createLogger({ name: 'gatewayAdmin-subgraph' });
  const { url, close } = await startSubgraph(createGatewayAdminSubgraph(config, logger), config);
  exitOnSignal(close, logger);
  console.log(`gatewayAdmin subgraph on ${url}/graphql (admin interface ${config.apiUrl})`);
});
