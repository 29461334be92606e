import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createRecognitionEmulator } from '../../emulators/recognition/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { readGatewayConfig, type GatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readRecognitionConfig, type RecognitionConfig } from '../../subgraphs/recognition/config.ts';
import { createRecognitionSubgraph } from '../../subgraphs/recognition/server.ts';
import { emulatorControl } from './stack.ts';
import { testLogger } from './logs.ts';

/** The recognition slice as separate pieces, for tests that stop, restart or duplicate one of them. */
export async function startRecognitionEmulator() {
  const started = await startEmulator(createRecognitionEmulator({ deliveryRetryMs: 40 }), 0);
  return { ...started, control: emulatorControl(started.url) };
}

export async function startRecognitionSubgraph(apiUrl: string, settings: Partial<RecognitionConfig> & { port?: number }) {
  const config = readRecognitionConfig({}, { apiUrl, port: settings.port ?? 0, publicUrl: 'self', serviceToken: DEMO_TOKENS.admin, ...settings });
  const started = await startSubgraph(await createRecognitionSubgraph(config, testLogger('recognition-subgraph')), { port: config.port });
  return { ...started, graphqlUrl: `${started.url}/graphql`, port: Number(new URL(started.url).port) };
}

export function startRecognitionGateway(subgraphUrl: string, overrides: Partial<GatewayConfig> = {}) {
  return startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { recognition: subgraphUrl }, ...overrides }), testLogger('gateway'));
}
