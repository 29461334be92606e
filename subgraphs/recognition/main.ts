import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal, readSubgraphDrain } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readRecognitionConfig } from './config.ts';
import { createRecognitionSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'recognition-subgraph' });
  const config = readRecognitionConfig(process.env);
  const logger = createLogger({ name: 'recognition-subgraph' });
  const shutdown = readSubgraphDrain(process.env);
  const { url, drain } = await startSubgraph(await createRecognitionSubgraph(config, logger), config);
  exitOnSignal(() => drain(shutdown), logger);
  console.log(`recognition subgraph on ${url}/graphql (upstream ${config.apiUrl})`);
});
