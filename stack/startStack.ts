import { readHost, readPort, readUrl, type Env } from '../lib/config.ts';
import type { Started } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import { readGatewayConfig } from '../gateway/config.ts';
import { startGateway, type StartedGateway } from '../gateway/server.ts';
import { SERVICES, emulatedEnvOf, type ServiceModule } from './services.ts';
import { startDemoAuthorization } from './demoAuthorization.ts';

export interface StackOptions {
  env: Env;
  logger: Logger;
  /** Bind everything to port 0 (tests) instead of the configured ports. */
  ephemeralPorts?: boolean;
  host?: string;
  /** The clock subgraphs' time-limited links expire by (tests move it). @default Date.now */
  now?: () => number;
}

export interface StartedService {
  name: string;
  /** The emulator's origin, when this stack started one. */
  emulatorUrl?: string;
  apiUrl: string;
  subgraphUrl: string;
}

export interface StartedStack {
  gateway: StartedGateway;
  services: StartedService[];
  demoHeaders: Record<string, string>;
  /** The demo's authorization server, when `GATEWAY_AUTH=oauth2` named none. */
  authorizationServerUrl?: string;
  close(): Promise<void>;
}

/**
 * The whole graph in one process: for each service, its emulator (unless `<SERVICE>_API_URL` points
 * at a real upstream) and its subgraph; then the gateway over them.
 */
export async function startStack({ env, logger, ephemeralPorts = false, host = readHost(env), now }: StackOptions): Promise<StartedStack> {
  const closers: Started[] = [];
  const services: StartedService[] = [];
  const port = (name: string, fallback: number) => (ephemeralPorts ? 0 : readPort(env, name, fallback));
  try {
    for (const service of SERVICES) {
      services.push(await startService(service));
    }
    const demoHeaders = Object.assign({}, ...SERVICES.map((service) => service.demoHeaders)) as Record<string, string>;
    const authorization = await startDemoAuthorization(env, { ephemeralPorts, host, demoHeaders });
    if (authorization) closers.push(authorization.started);
    const gatewayConfig = readGatewayConfig(authorization?.env ?? env, {
        host,
        port: port('GATEWAY_PORT', 4000),
        subgraphUrls: Object.fromEntries(services.map((service) => [service.name, service.subgraphUrl])),
      ...(env.SANDBOX_HEADERS ? {} : { sandboxHeaders: authorization ? {} : demoHeaders }),
    });
    if (authorization) gatewayConfig.auth.principalCredentials = authorization.principalCredentials;
    const gateway = await startGateway(gatewayConfig, logger.child({ server: 'gateway' }));
    closers.push(gateway);
    return {
      gateway,
      services,
      demoHeaders,
      ...(authorization ? { authorizationServerUrl: authorization.started.url } : {}),
      async close() {
        for (const closer of closers.reverse()) await closer.close();
      },
    };
  } catch (error) {
    for (const closer of closers.reverse()) await closer.close().catch(() => undefined);
    throw error;
  }

  async function startService(service: ServiceModule): Promise<StartedService> {
    let apiUrl = readUrl(env, service.env.apiUrl);
    let emulatorUrl: string | undefined;
    let subgraphEnv = env;
    if (!apiUrl) {
      const emulator = await service.startEmulator(port(service.env.emulatorPort, service.emulatorPort), host, env);
      closers.push(emulator);
      emulatorUrl = apiUrl = emulator.url;
      subgraphEnv = { ...emulatedEnvOf(service, emulator.url), ...env };
    }
    const subgraph = await service.startSubgraph({
      apiUrl,
      port: port(service.env.subgraphPort, service.subgraphPort),
      host,
      logger: logger.child({ server: `${service.name}-subgraph` }),
      env: subgraphEnv,
      ...(now ? { now } : {}),
    });
    closers.push(subgraph);
    return { name: service.name, apiUrl, subgraphUrl: `${subgraph.url}/graphql`, ...(emulatorUrl ? { emulatorUrl } : {}) };
  }
}
