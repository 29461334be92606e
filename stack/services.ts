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
import { createImportsEmulator } from '../emulators/imports/emulator.ts';
import { DEMO_APIKEY as IMPORTS_DEMO_APIKEY } from '../emulators/imports/data.ts';
import { IMPORTS_EMULATOR_PORT, IMPORTS_SUBGRAPH_PORT, readImportsConfig } from '../subgraphs/imports/config.ts';
import { createImportsSubgraph } from '../subgraphs/imports/server.ts';

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
    name: 'imports',
    apiUrlEnv: 'IMPORTS_API_URL',
    emulatorPortEnv: 'IMPORTS_EMULATOR_PORT',
    defaultEmulatorPort: IMPORTS_EMULATOR_PORT,
    subgraphPortEnv: 'IMPORTS_SUBGRAPH_PORT',
    defaultSubgraphPort: IMPORTS_SUBGRAPH_PORT,
    demoHeaders: { 'x-imports-apikey': IMPORTS_DEMO_APIKEY },
    startEmulator: (port, host) => startEmulator(createImportsEmulator(), port, host),
    startSubgraph: async ({ apiUrl, port, host, logger, env }) => startSubgraph(await createImportsSubgraph(readImportsConfig(env, { apiUrl, port, host }), logger), { port, host }),
  },
];
