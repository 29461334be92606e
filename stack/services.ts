import type { Started } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import type { Env } from '../lib/config.ts';
import { SERVICE_ENTRY, type ServiceEntry } from '../lib/services.ts';
import { startEmulator } from '../emulators/kit/emulator.ts';
import { readEmulatorRateLimits } from '../emulators/kit/throttle.ts';
import { createRecognitionEmulator, readRecognitionEmulatorOptions } from '../emulators/recognition/emulator.ts';
import { DEMO_TOKENS } from '../emulators/recognition/data.ts';
import { startSubgraph, type StartedSubgraph } from '../subgraphs/kit/server.ts';
import { readRecognitionConfig } from '../subgraphs/recognition/config.ts';
import { createRecognitionSubgraph } from '../subgraphs/recognition/server.ts';
import { createMarketplaceEmulator } from '../emulators/marketplace/emulator.ts';
import { DEMO_CREDENTIALS } from '../emulators/marketplace/data.ts';
import { readMarketplaceConfig, readMarketplaceName } from '../subgraphs/marketplace/config.ts';
import { createMarketplaceSubgraph } from '../subgraphs/marketplace/server.ts';
import { createDashboardsEmulator } from '../emulators/dashboards/emulator.ts';
import { DEMO_TOKEN as DASHBOARDS_DEMO_TOKEN } from '../emulators/dashboards/data.ts';
import { readDashboardsConfig } from '../subgraphs/dashboards/config.ts';
import { createDashboardsSubgraph } from '../subgraphs/dashboards/server.ts';
import { createMessagingEmulator, readMessagingEmulatorOptions } from '../emulators/messaging/emulator.ts';
import { DEMO_STORE_ID as MESSAGING_DEMO_STORE, DEMO_TOKEN as MESSAGING_DEMO_TOKEN } from '../emulators/messaging/data.ts';
import { pointStoreCallbacks } from '../emulators/messaging/control.ts';
import { readMessagingConfig } from '../subgraphs/messaging/config.ts';
import { callbackUrls, createMessagingSubgraph } from '../subgraphs/messaging/server.ts';
import { createImportsEmulator } from '../emulators/imports/emulator.ts';
import { DEMO_APIKEY as IMPORTS_DEMO_APIKEY } from '../emulators/imports/data.ts';
import { readImportsConfig } from '../subgraphs/imports/config.ts';
import { createImportsSubgraph } from '../subgraphs/imports/server.ts';
import { createGatewayAdminEmulator } from '../emulators/gatewayAdmin/emulator.ts';
import { DEMO_ADMIN_TOKEN } from '../emulators/gatewayAdmin/data.ts';
import { readGatewayAdminConfig } from '../subgraphs/gatewayAdmin/config.ts';
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

/**
 * One REST service as the whole stack sees it: its registry entry (name, ports, settings), and
 * here what needs its code: its emulator, its subgraph, its demo credential.
 */
export interface ServiceModule extends ServiceEntry {
  /** Gateway headers carrying the demo credential (what a Sandbox user pastes). */
  demoHeaders: Record<string, string>;
  /** Settings the subgraph gets when its upstream is the emulator (e.g. to register its webhook there). */
  emulatedEnv?: Record<string, string> | ((emulatorUrl: string) => Record<string, string>);
  startEmulator(port: number, host: string, env: Env): Promise<Started>;
  startSubgraph(options: SubgraphStartOptions): Promise<StartedSubgraph>;
}

/** The settings a service's subgraph gets over its emulator at `emulatorUrl`. */
export function emulatedEnvOf(service: ServiceModule, emulatorUrl: string): Record<string, string> {
  return typeof service.emulatedEnv === 'function' ? service.emulatedEnv(emulatorUrl) : (service.emulatedEnv ?? {});
}

export const SERVICES: readonly ServiceModule[] = [
  {
    ...SERVICE_ENTRY.recognition,
    demoHeaders: { [SERVICE_ENTRY.recognition.credentialHeaders.token]: DEMO_TOKENS.admin },
    // The emulator reaches the subgraph on its listening address; an admin token registers the webhook.
    emulatedEnv: { RECOGNITION_PUBLIC_URL: 'self', RECOGNITION_SERVICE_TOKEN: DEMO_TOKENS.admin },
    startEmulator: (port, host, env) => startEmulator(createRecognitionEmulator(readRecognitionEmulatorOptions(env)), port, host),
    startSubgraph: async ({ apiUrl, port, host, logger, env }) => {
      const config = readRecognitionConfig(env, { apiUrl, port, host });
      return startSubgraph(await createRecognitionSubgraph(config, logger), config);
    },
  },
  {
    ...SERVICE_ENTRY.marketplace,
    demoHeaders: {
      [SERVICE_ENTRY.marketplace.credentialHeaders.email]: DEMO_CREDENTIALS.email,
      [SERVICE_ENTRY.marketplace.credentialHeaders.apiKey]: DEMO_CREDENTIALS.apiKey,
      [SERVICE_ENTRY.marketplace.credentialHeaders.accountKey]: DEMO_CREDENTIALS.accountKey,
    },
    startEmulator: (port, host, env) => startEmulator(createMarketplaceEmulator({ marketplace: readMarketplaceName(env), rateLimits: readEmulatorRateLimits(env) }), port, host),
    startSubgraph: ({ apiUrl, port, host, logger, env, now }) => {
      const config = readMarketplaceConfig(env, { apiUrl, port, host });
      return startSubgraph(createMarketplaceSubgraph(config, logger, now ? { now } : {}), config);
    },
  },
  {
    ...SERVICE_ENTRY.dashboards,
    demoHeaders: { [SERVICE_ENTRY.dashboards.credentialHeaders.token]: DASHBOARDS_DEMO_TOKEN },
    startEmulator: (port, host) => startEmulator(createDashboardsEmulator(), port, host),
    startSubgraph: ({ apiUrl, port, host, logger, env }) => {
      const config = readDashboardsConfig(env, { apiUrl, port, host });
      return startSubgraph(createDashboardsSubgraph(config, logger), config);
    },
  },
  {
    ...SERVICE_ENTRY.messaging,
    demoHeaders: { [SERVICE_ENTRY.messaging.credentialHeaders.token]: MESSAGING_DEMO_TOKEN },
    // The emulator's demo store posts its callbacks to the subgraph: a text sent there reaches Sandbox with no manual step.
    emulatedEnv: { MESSAGING_EMULATOR_CALLBACK_STORE: MESSAGING_DEMO_STORE },
    startEmulator: (port, host, env) => startEmulator(createMessagingEmulator(readMessagingEmulatorOptions(env)), port, host),
    startSubgraph: async ({ apiUrl, port, host, logger, env }) => {
      const config = readMessagingConfig(env, { apiUrl, port, host });
      const started = await startSubgraph(await createMessagingSubgraph(config, logger), config);
      const store = env.MESSAGING_EMULATOR_CALLBACK_STORE;
      if (store) await pointStoreCallbacks(apiUrl, store, callbackUrls(started.url, config.callbackSecret));
      return started;
    },
  },
  {
    ...SERVICE_ENTRY.imports,
    demoHeaders: { [SERVICE_ENTRY.imports.credentialHeaders.apiKey]: IMPORTS_DEMO_APIKEY },
    startEmulator: (port, host) => startEmulator(createImportsEmulator(), port, host),
    startSubgraph: async ({ apiUrl, port, host, logger, env }) => {
      const config = readImportsConfig(env, { apiUrl, port, host });
      return startSubgraph(await createImportsSubgraph(config, logger), config);
    },
  },
  {
    ...SERVICE_ENTRY.gatewayAdmin,
    demoHeaders: { [SERVICE_ENTRY.gatewayAdmin.credentialHeaders.adminToken]: DEMO_ADMIN_TOKEN },
    // The emulated gateway is a demo: its administrator is whoever holds the demo token, and its
    // proxy (the plugin's token endpoint) is the emulator itself.
    emulatedEnv: (emulatorUrl) => ({ GATEWAY_ADMIN_TOKEN: DEMO_ADMIN_TOKEN, GATEWAY_ADMIN_PROXY_URL: emulatorUrl }),
    startEmulator: (port, host) => startEmulator(createGatewayAdminEmulator(), port, host),
    startSubgraph: ({ apiUrl, port, host, logger, env }) => {
      const config = readGatewayAdminConfig(env, { apiUrl, port, host });
      return startSubgraph(createGatewayAdminSubgraph(config, logger), config);
    },
  },
];
