import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createImportsEmulator } from '../../emulators/imports/emulator.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';
import { startSubgraph } from '../../subgraphs/kit/server.ts';
import { readImportsConfig, type ImportsConfig } from '../../subgraphs/imports/config.ts';
import { createImportsSubgraph } from '../../subgraphs/imports/server.ts';
import { createManualClock, type ManualClock } from './manualClock.ts';
import { emulatorControl, type GraphQLResult } from './stack.ts';
import { testLogger } from './logs.ts';
import { closeAfterFile } from './afterFile.ts';
import { waitUntil } from './waitFor.ts';

/** The imports slice as separate pieces: the poller's clock is the test's, and replicas can be started and stopped. */
export async function startImportsEmulator() {
  const started = await startEmulator(createImportsEmulator(), 0);
  return { ...started, control: emulatorControl(started.url), file: (name: string) => `${started.url}/__emulator/files/${name}` };
}

export async function startImportsSubgraph(apiUrl: string, settings: Partial<ImportsConfig> = {}, clock: ManualClock = createManualClock()) {
  const config = readImportsConfig({}, { apiUrl, port: 0, ...settings });
  const started = await startSubgraph(await createImportsSubgraph(config, testLogger('imports-subgraph'), { clock }), { port: 0 });
  const metricsUrl = `${started.url}/metrics`;
  const gauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(metricsUrl)).text())?.[1] ?? -1);
  return {
    ...started,
    graphqlUrl: `${started.url}/graphql`,
    metricsUrl,
    clock,
    gauge,
    /** Waits until the subgraph holds `count` status subscriptions. */
    async subscriptions(count: number) {
      let seen = -1;
      await waitUntil(
        async () => (seen = await gauge('imports_status_subscriptions')) === count,
        () => `${count} import status subscriptions (saw ${seen})`,
      );
    },
  };
}

export async function startImportsGateway(subgraphUrl: string) {
  const gateway = await startGateway(readGatewayConfig({}, { port: 0, subgraphUrls: { imports: subgraphUrl } }), testLogger('gateway'));
  return {
    ...gateway,
    async gql<T = Record<string, unknown>>(query: string, { variables, headers }: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {}): Promise<GraphQLResult<T>> {
      const response = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
      return (await response.json()) as GraphQLResult<T>;
    },
  };
}

/** Emulator, subgraph and gateway, closed after the file's tests. */
export async function startImportsSlice(settings: Partial<ImportsConfig> = {}) {
  const emulator = await startImportsEmulator();
  const subgraph = await startImportsSubgraph(emulator.url, settings);
  const gateway = await startImportsGateway(subgraph.graphqlUrl);
  closeAfterFile(async () => {
    await gateway.close();
    await subgraph.close();
    await emulator.close();
  });
  return { emulator, subgraph, gateway };
}
