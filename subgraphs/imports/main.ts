import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal, readSubgraphDrain } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readImportsConfig } from './config.ts';
import { createImportsSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'imports-subgraph' });
  const config = readImportsConfig(process.env);
  const logger = createLogger({ name: 'imports-subgraph' });
  const shutdown = readSubgraphDrain(process.env);
  const { url, drain } = await startSubgraph(await createImportsSubgraph(config, logger), config);
  exitOnSignal(() => drain(shutdown), logger);
  console.log(`imports subgraph on ${url}/graphql (upstream ${config.apiUrl}/v1${config.redisUrl ? ', one poller per import across replicas via Redis' : ''})`);
});
