import type { Started } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import { readInt, type Env } from '../lib/config.ts';
import { startEmulator } from '../emulators/kit/emulator.ts';
import { createRecognitionEmulator } from '../emulators/recognition/emulator.ts';
import { DEMO_TOKENS } from '../emulators/recognition/data.ts';
import { startSubgraph } from '../subgraphs/kit/server.ts';
import { readRecognitionConfig } from '../subgraphs/recognition/config.ts';
import { createRecognitionSubgraph } from '../subgraphs/recognition/server.ts';

export interface SubgraphStartOptions {
  /** The upstream's base URL (the spec's `{base_url}`). */
  apiUrl: string;
  port: number;
  host: string;
  logger: Logger;
  env: Env;
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
];
