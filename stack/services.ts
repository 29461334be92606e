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
import { createGatewayAdminEmulator } from '../emulators/gatewayAdmin/emulator.ts';
import { DEMO_ADMIN_TOKEN } from '../emulators/gatewayAdmin/data.ts';
import { GATEWAY_ADMIN_EMULATOR_PORT, GATEWAY_ADMIN_SUBGRAPH_PORT, readGatewayAdminConfig } from '../subgraphs/gatewayAdmin/config.ts';
import { createGatewayAdminSubgraph } from '../subgraphs/gatewayAdmin/server.ts';

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
  emulatedEnv?: Record<string, string> | ((emulatorUrl: string) => Record<string, string>);
  startEmulator(port: number, host: string, env: Env): Promise<Started>;
  startSubgraph(options: SubgraphStartOptions): Promise<Started>;
}

/** The settings a service's subgraph gets over its emulator at `emulatorUrl`. */
export function emulatedEnvOf(service: ServiceModule, emulatorUrl: string): Record<string, string> {
  return typeof service.emulatedEnv === 'function' ? service.emulatedEnv(emulatorUrl) : (service.emulatedEnv ?? {});
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
    name: 'gatewayAdmin',
    apiUrlEnv: 'GATEWAY_ADMIN_API_URL',
    emulatorPortEnv: 'GATEWAY_ADMIN_EMULATOR_PORT',
    defaultEmulatorPort: GATEWAY_ADMIN_EMULATOR_PORT,
    subgraphPortEnv: 'GATEWAY_ADMIN_SUBGRAPH_PORT',
    defaultSubgraphPort: GATEWAY_ADMIN_SUBGRAPH_PORT,
    demoHeaders: { 'x-gateway-admin-token': DEMO_ADMIN_TOKEN },
    // The emulated gateway is a demo: its administrator is whoever holds the demo token, and its
    // proxy (the plugin's token endpoint) is the emulator itself.
    emulatedEnv: (emulatorUrl) => ({ GATEWAY_ADMIN_TOKEN: DEMO_ADMIN_TOKEN, GATEWAY_ADMIN_PROXY_URL: emulatorUrl }),
    startEmulator: (port, host) => startEmulator(createGatewayAdminEmulator(), port, host),
    startSubgraph: ({ apiUrl, port, host, logger, env }) =>
      startSubgraph(createGatewayAdminSubgraph(readGatewayAdminConfig(env, { apiUrl, port, host }), logger), { port, host }),
  },
];
