import { ConfigError, readHost, readPort, readUrl, type Env } from '../lib/config.ts';
import type { Started } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import type { DrainSettings } from '../lib/shutdown.ts';
import type { StartedSubgraph } from '../subgraphs/kit/server.ts';
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
  /**
   * An emulator for each upstream whose `<SERVICE>_API_URL` is unset, the demo authorization server
   * under `GATEWAY_AUTH=oauth2`, the demo credentials preset in Sandbox (`npm start`, the tests).
   * Off (the one-process deployment): every `<SERVICE>_API_URL` must be set, and none of these starts.
   * @default true
   */
  demo?: boolean;
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
  /**
   * A graceful stop (SIGTERM): the gateway drains with its own settings (`GATEWAY_DRAIN_DELAY_MS`,
   * `GATEWAY_SHUTDOWN_GRACE_MS`), then every subgraph at once with `subgraphs`; not before, since
   * the requests the gateway still finishes may need any of them. Then the rest closes.
   */
  drain(subgraphs: DrainSettings): Promise<void>;
}

/**
 * The whole graph in one process: for each service, its emulator (unless `<SERVICE>_API_URL` points
 * at a real upstream) and its subgraph; then the gateway over them.
 */
export async function startStack({ env, logger, ephemeralPorts = false, host = readHost(env), now, demo = true }: StackOptions): Promise<StartedStack> {
  if (!demo) {
    const missing = SERVICES.map((service) => service.env.apiUrl).filter((name) => !readUrl(env, name));
    if (missing.length > 0) {
      throw new ConfigError(`${missing.join(', ')} must be set: this runs the graph over the real services only (\`npm start\` runs it over emulators, with demo credentials).`);
    }
  }
  const closers: Started[] = [];
  const subgraphs: StartedSubgraph[] = [];
  const services: StartedService[] = [];
  const port = (name: string, fallback: number) => (ephemeralPorts ? 0 : readPort(env, name, fallback));
  try {
    for (const service of SERVICES) {
      services.push(await startService(service));
    }
    const demoHeaders = Object.assign({}, ...SERVICES.map((service) => service.demoHeaders)) as Record<string, string>;
    const authorization = demo ? await startDemoAuthorization(env, { ephemeralPorts, host, demoHeaders }) : undefined;
    if (authorization) closers.push(authorization.started);
    const gatewayConfig = readGatewayConfig(authorization?.env ?? env, {
        host,
        port: port('GATEWAY_PORT', 4000),
        subgraphUrls: Object.fromEntries(services.map((service) => [service.name, service.subgraphUrl])),
      ...(env.SANDBOX_HEADERS || !demo ? {} : { sandboxHeaders: authorization ? {} : demoHeaders }),
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
      async drain(subgraphDrain) {
        await gateway.drain(gatewayConfig.shutdown);
        await Promise.all(subgraphs.map((subgraph) => subgraph.drain(subgraphDrain)));
        // Emulators and the demo's authorization server, when this stack started them.
        const drained = new Set<Started>([gateway, ...subgraphs]);
        for (const closer of [...closers].reverse()) if (!drained.has(closer)) await closer.close();
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
    subgraphs.push(subgraph);
    return { name: service.name, apiUrl, subgraphUrl: `${subgraph.url}/graphql`, ...(emulatorUrl ? { emulatorUrl } : {}) };
  }
}
