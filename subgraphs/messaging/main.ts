import { runMain } from '../../lib/config.ts';
import { createLogger } from '../../lib/logger.ts';
import { startTracing } from '../../lib/tracing.ts';
import { exitOnSignal, readSubgraphDrain } from '../../lib/shutdown.ts';
import { startSubgraph } from '../kit/server.ts';
import { readMessagingConfig } from './config.ts';
import { createMessagingSubgraph } from './server.ts';

runMain(async () => {
  await startTracing(process.env, { serviceName: 'messaging-subgraph' });
  const config = readMessagingConfig(process.env);
  const logger = createLogger({ name: 'messaging-subgraph' });
  const shutdown = readSubgraphDrain(process.env);
  const { url, drain } = await startSubgraph(await createMessagingSubgraph(config, logger), config);
  exitOnSignal(() => drain(shutdown), logger);
  console.log(`messaging subgraph on ${url}/graphql (upstream ${config.apiUrl})`);
  console.log(`callbacks: ${url}/callbacks/messaging/inbound/<MESSAGING_CALLBACK_SECRET> and ${url}/callbacks/messaging/status/<MESSAGING_CALLBACK_SECRET>`);
});
