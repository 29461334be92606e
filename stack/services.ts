import type { Started } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import { readInt, type Env } from '../lib/config.ts';
import { startEmulator } from '../emulators/kit/emulator.ts';
import { createRecognitionEmulator } from '../emulators/recognition/emulator.ts';
import { DEMO_TOKENS } from '../emulators/recognition/data.ts';
import { startSubgraph } from '../subgraphs/kit/server.ts';
import { readRecognitionConfig } from '../subgraphs/recognition/config.ts';
import { createRecognitionSubgraph } from '../subgraphs/recognition/server.ts';
import { createMarketplaceEmulator } from '../emulators/marketplace/emulator.ts';
import { DEMO_CREDENTIALS } from '../emulators/marketplace/data.ts';
import { readMarketplaceConfig, readMarketplaceName } from '../subgraphs/marketplace/config.ts';
import { createMarketplaceSubgraph } from '../subgraphs/marketplace/server.ts';
import { createDashboardsEmulator } from '../emulators/dashboards/emulator.ts';
import { DEMO_TOKEN as DASHBOARDS_DEMO_TOKEN } from '../emulators/dashboards/data.ts';
import { DASHBOARDS_EMULATOR_PORT, DASHBOARDS_SUBGRAPH_PORT, readDashboardsConfig } from '../subgraphs/dashboards/config.ts';
import { createDashboardsSubgraph } from '../subgraphs/dashboards/server.ts';
import { createMessagingEmulator } from '../emulators/messaging/emulator.ts';
import { DEMO_STORE_ID as MESSAGING_DEMO_STORE, DEMO_TOKEN as MESSAGING_DEMO_TOKEN } from '../emulators/messaging/data.ts';
import { pointStoreCallbacks } from '../emulators/messaging/control.ts';
import { MESSAGING_EMULATOR_PORT, MESSAGING_SUBGRAPH_PORT, readMessagingConfig } from '../subgraphs/messaging/config.ts';
import { callbackUrls, createMessagingSubgraph } from '../subgraphs/messaging/server.ts';

export interface SubgraphStartOptions {
  /** The upstream's base URL (the spec's `{base_url}`). */
  apiUrl: string;
  port: number;
  host: string;
  logger: Logger;
  env: Env;
  /** The clock time-limited links expire by; tests move it. @default Date.now */
  now?: () => number;
}

/** One REST service as the whole stack sees it: its emulator, its subgraph, its demo credential. */
export interface ServiceModule {
  name: string;
  /** The env variable that points the subgraph at a real upstream instead of the emulator. */
  apiUrlEnv: string;
  emulatorPortEnv: string;
  defaultEmulatorPort: number;
  subgraphPortEnv: string;
  defaultSubgraphPort: number;
  /** Gateway headers carrying the demo credential (what a Sandbox user pastes). */
  demoHeaders: Record<string, string>;
  /** Settings the subgraph gets when its upstream is the emulator (e.g. to register its webhook there). */
  emulatedEnv?: Record<string, string>;
  startEmulator(port: number, host: string, env: Env): Promise<Started>;
  startSubgraph(options: SubgraphStartOptions): Promise<Started>;
}

export const SERVICES: readonly ServiceModule[] = [
  {
    name: 'recognition',
    apiUrlEnv: 'RECOGNITION_API_URL',
    emulatorPortEnv: 'RECOGNITION_EMULATOR_PORT',
    defaultEmulatorPort: 4101,
    subgraphPortEnv: 'RECOGNITION_SUBGRAPH_PORT',
    defaultSubgraphPort: 4001,
    demoHeaders: { 'x-recognition-token': DEMO_TOKENS.admin },
    // The emulator reaches the subgraph on its listening address; an admin token registers the webhook.
    emulatedEnv: { RECOGNITION_PUBLIC_URL: 'self', RECOGNITION_SERVICE_TOKEN: DEMO_TOKENS.admin },
    startEmulator: (port, host, env) =>
      startEmulator(createRecognitionEmulator({ deliveryRetryMs: readInt(env, 'RECOGNITION_EMULATOR_RETRY_MS', 500, { min: 1, max: 60_000 }) }), port, host),
    startSubgraph: async ({ apiUrl, port, host, logger, env }) =>
      startSubgraph(await createRecognitionSubgraph(readRecognitionConfig(env, { apiUrl, port, host }), logger), { port, host }),
  },
  {
    name: 'marketplace',
    apiUrlEnv: 'MARKETPLACE_API_URL',
    emulatorPortEnv: 'MARKETPLACE_EMULATOR_PORT',
    defaultEmulatorPort: 4102,
    subgraphPortEnv: 'MARKETPLACE_SUBGRAPH_PORT',
    defaultSubgraphPort: 4002,
    demoHeaders: {
      'x-marketplace-email': DEMO_CREDENTIALS.email,
      'x-marketplace-api-key': DEMO_CREDENTIALS.apiKey,
      'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey,
    },
    startEmulator: (port, host, env) => startEmulator(createMarketplaceEmulator({ marketplace: readMarketplaceName(env) }), port, host),
    startSubgraph: ({ apiUrl, port, host, logger, env, now }) =>
      startSubgraph(createMarketplaceSubgraph(readMarketplaceConfig(env, { apiUrl, port, host }), logger, now ? { now } : {}), { port, host }),
  },
  {
    name: 'dashboards',
    apiUrlEnv: 'DASHBOARDS_API_URL',
    emulatorPortEnv: 'DASHBOARDS_EMULATOR_PORT',
    defaultEmulatorPort: DASHBOARDS_EMULATOR_PORT,
    subgraphPortEnv: 'DASHBOARDS_SUBGRAPH_PORT',
    defaultSubgraphPort: DASHBOARDS_SUBGRAPH_PORT,
    demoHeaders: { 'x-dashboards-token': DASHBOARDS_DEMO_TOKEN },
    startEmulator: (port, host) => startEmulator(createDashboardsEmulator(), port, host),
    startSubgraph: ({ apiUrl, port, host, logger, env }) => startSubgraph(createDashboardsSubgraph(readDashboardsConfig(env, { apiUrl, port, host }), logger), { port, host }),
  },
  {
    name: 'messaging',
    apiUrlEnv: 'MESSAGING_API_URL',
    emulatorPortEnv: 'MESSAGING_EMULATOR_PORT',
    defaultEmulatorPort: MESSAGING_EMULATOR_PORT,
    subgraphPortEnv: 'MESSAGING_SUBGRAPH_PORT',
    defaultSubgraphPort: MESSAGING_SUBGRAPH_PORT,
    demoHeaders: { 'x-messaging-token': MESSAGING_DEMO_TOKEN },
    // The emulator's demo store posts its callbacks to the subgraph: a text sent there reaches Sandbox with no manual step.
    emulatedEnv: { MESSAGING_EMULATOR_CALLBACK_STORE: MESSAGING_DEMO_STORE },
    startEmulator: (port, host, env) =>
      startEmulator(createMessagingEmulator({ deliveryRetryMs: readInt(env, 'MESSAGING_EMULATOR_RETRY_MS', 500, { min: 1, max: 60_000 }) }), port, host),
    startSubgraph: async ({ apiUrl, port, host, logger, env }) => {
      const config = readMessagingConfig(env, { apiUrl, port, host });
      const started = await startSubgraph(await createMessagingSubgraph(config, logger), { port, host });
      const store = env.MESSAGING_EMULATOR_CALLBACK_STORE;
      if (store) await pointStoreCallbacks(apiUrl, store, callbackUrls(started.url, config.callbackSecret));
      return started;
    },
  },
];
