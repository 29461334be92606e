import { runMain } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { exitOnSignal, readSubgraphDrain } from '../lib/shutdown.ts';
import { startTracing } from '../lib/tracing.ts';
import { startStack } from './startStack.ts';

/**
 * The one-process deployment: the gateway and every subgraph in this process, each subgraph still on
 * its own port, over the real services only. On a small machine each process hop costs an idle
 * core's wake-up, so one process answers sooner at low load; at saturation it has one core where
 * seven have two (docs/PERFORMANCE.md, "One process"). `npm start` is the demo over emulators.
 */
runMain(async () => {
  // Read first: a bad value stops the process before anything listens.
  const subgraphDrain = readSubgraphDrain(process.env);
  // Every part in this one process: each part's spans carry its own service name.
  await startTracing(process.env, { serviceName: 'gateway', perService: true });
  // At the separate mains' level (info unless LOG_LEVEL says otherwise), so the access log is written as theirs.
  const logger = createLogger({ name: 'graph' });
  const stack = await startStack({ env: process.env, logger, demo: false });
  exitOnSignal(() => stack.drain(subgraphDrain), logger);
  console.log(`gateway on ${stack.gateway.graphqlUrl} (one process with the subgraphs ${stack.services.map((service) => service.name).join(', ')})`);
});
