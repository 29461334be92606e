import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startSubgraph } from '../kit/server.ts';
import { readGatewayAdminConfig } from './config.ts';
import { createGatewayAdminSubgraph } from './server.ts';

runMain(async () => {
  const config = readGatewayAdminConfig(process.env);
  const logger = createLogger({ name: 'gatewayAdmin-subgraph' });
  const { url } = await startSubgraph(createGatewayAdminSubgraph(config, logger), { port: config.port, host: config.host });
  console.log(`gatewayAdmin subgraph on ${url}/graphql (admin interface ${config.apiUrl})`);
});
