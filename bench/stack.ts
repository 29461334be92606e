import { request } from 'undici';
import { SERVICES, emulatedEnvOf, type ServiceModule } from '../stack/services.ts';
import { launch, type Child } from './processes.ts';

/** One emulator's control surface, as the benchmark drives it. */
export interface EmulatorControl {
  service: string;
  /** The emulator's origin: the service's `{base_url}`. */
  origin: string;
  /** Upstream calls logged since the last `clearRequests`. */
  callCount(): Promise<number>;
  clearRequests(): Promise<void>;
  /** Every answer waits this long before the handler runs; 0 removes the delay. */
  setLatency(ms: number): Promise<void>;
}

export interface BenchStack {
  /** The gateway's GraphQL endpoint. */
  graphqlUrl: string;
  emulators: EmulatorControl[];
  /** Gateway headers carrying every service's demo credential. */
  demoHeaders: Record<string, string>;
  children: Child[];
  /**
   * Another gateway over the same subgraphs, with settings of its own (a comparison's other side);
   * not among `children`: the caller stops it.
   */
  launchGateway(name: string, env: Record<string, string>): Promise<Child>;
  /**
   * The gateway and every subgraph in one process (`stack/main.ts`, the one-process deployment)
   * over the same emulators, with settings of its own; not among `children`: the caller stops it.
   */
  launchOneProcess(name: string, env: Record<string, string>): Promise<Child>;
  stop(): Promise<void>;
}

export interface LaunchStackOptions {
  /** Node flags per process name (`gateway`, `<service>-subgraph`, `<service>-emulator`), for profiling. */
  nodeFlags?: (name: string) => readonly string[];
}

async function control(origin: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const response = await request(`${origin}/__emulator/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} /__emulator/${path} answered ${response.statusCode}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

function emulatorControl(service: string, origin: string): EmulatorControl {
  return {
    service,
    origin,
    callCount: async () => ((await control(origin, 'GET', 'counters')) as { total: number }).total,
    clearRequests: async () => {
      await control(origin, 'DELETE', 'requests');
    },
    async setLatency(ms) {
      await control(origin, 'DELETE', 'faults');
      if (ms > 0) await control(origin, 'POST', 'faults', { path: '*', latencyMs: ms });
    },
  };
}

/** What the one-process deployment needs to run over the benchmark's emulators, as the subgraphs apart do. */
function oneProcessEnv(services: readonly { service: ServiceModule; origin: string }[]): Record<string, string> {
  const env: Record<string, string> = { GATEWAY_PORT: '0', UPSTREAM_PACING: 'off' };
  for (const { service, origin } of services) Object.assign(env, emulatedEnvOf(service, origin), { [service.env.subgraphPort]: '0', [service.env.apiUrl]: origin });
  return env;
}

/**
 * Every service's emulator and subgraph, then the gateway, each its own process on a port of its
 * own choosing, so the graph uses both cores as it would in production.
 */
export async function launchStack({ nodeFlags = () => [] }: LaunchStackOptions = {}): Promise<BenchStack> {
  const children: Child[] = [];
  const start = async (name: string, entry: string, env: Record<string, string>) => {
    const child = await launch({ name, entry, env, nodeFlags: nodeFlags(name) });
    children.push(child);
    return child;
  };
  const stop = async () => {
    await Promise.all(children.map((child) => child.stop()));
  };
  try {
    const services = await Promise.all(
      SERVICES.map(async (service) => {
        // The benchmark measures the graph's own cost: the services' published rates (a second per
        // marketplace call) would measure only the wait, and the floor's direct calls would meet 429s.
        const emulator = await start(`${service.name}-emulator`, `emulators/${service.name}/main.ts`, { [service.env.emulatorPort]: '0', EMULATOR_RATE_LIMITS: 'off' });
        const origin = new URL(emulator.url).origin;
        // As `npm start` runs it over its emulator (the recognition subgraph registers its webhook there).
        const subgraph = await start(`${service.name}-subgraph`, `subgraphs/${service.name}/main.ts`, {
          ...emulatedEnvOf(service, origin),
          [service.env.subgraphPort]: '0',
          [service.env.apiUrl]: origin,
          UPSTREAM_PACING: 'off',
        });
        return { service, origin, subgraphUrl: subgraph.url };
      }),
    );
    const gatewayEnv = {
      GATEWAY_PORT: '0',
      // No load balancer to warn: a stopped benchmark stops at once.
      GATEWAY_DRAIN_DELAY_MS: '0',
      // 10,000 identical subscribers under the one demo credential (the default allows 2,000).
      MAX_SUBSCRIPTIONS_PER_CREDENTIAL: '20000',
      // Each its own connection, from this one address (the default allows 1,000).
      MAX_CONNECTIONS_PER_ADDRESS: '20000',
      ...Object.fromEntries(services.map(({ service, subgraphUrl }) => [service.env.subgraphUrl, subgraphUrl])),
    };
    // Its inspector lets the subscriptions' part collect garbage before reading the live heap; no
    // session is attached until then, so the scenarios run as without it.
    const gateway = await launch({ name: 'gateway', entry: 'gateway/main.ts', env: gatewayEnv, nodeFlags: ['--inspect=127.0.0.1:0', ...nodeFlags('gateway')] });
    children.push(gateway);
    return {
      graphqlUrl: gateway.url,
      emulators: services.map(({ service, origin }) => emulatorControl(service.name, origin)),
      demoHeaders: Object.assign({}, ...SERVICES.map((service) => service.demoHeaders)) as Record<string, string>,
      children,
      launchGateway: (name, env) => launch({ name, entry: 'gateway/main.ts', env: { ...gatewayEnv, ...env }, nodeFlags: nodeFlags(name) }),
      launchOneProcess: (name, env) => launch({ name, entry: 'stack/main.ts', env: { ...oneProcessEnv(services), GATEWAY_DRAIN_DELAY_MS: '0', SUBGRAPH_DRAIN_DELAY_MS: '0', ...env }, nodeFlags: nodeFlags(name) }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
