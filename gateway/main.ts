import { runMain } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { readGatewayConfig } from './config.ts';
import { startGateway } from './server.ts';

runMain(async () => {
  const config = readGatewayConfig(process.env);
  const gateway = await startGateway(config, createLogger({ name: 'gateway' }));
  console.log(`gateway on ${gateway.graphqlUrl}`);
});
