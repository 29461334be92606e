import { runMain } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { startTracing } from '../lib/tracing.ts';
import { exitOnSignal } from '../lib/shutdown.ts';
import { readGatewayConfig } from './config.ts';
import { startGateway } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'gateway' });
  const config = readGatewayConfig(process.env);
  const logger = createLogger({ name: 'gateway' });
  const gateway = await startGateway(config, logger);
  exitOnSignal(async () => {
    await gateway.drain(config.shutdown);
  }, logger);
  console.log(`gateway on ${gateway.graphqlUrl}`);
});
