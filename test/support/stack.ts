import { closeAfterFile } from './afterFile.ts';
import { startStack, type StartedStack } from '../../stack/startStack.ts';
import type { Dialect, LoggedRequest, Fault } from '../../emulators/kit/emulator.ts';
import { testLogger } from './logs.ts';
import { readGatewayConfig } from '../../gateway/config.ts';
import { startGateway, type StartedGateway } from '../../gateway/server.ts';

export interface GraphQLResult<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

export interface EmulatorControl {
  url: string;
  requests(): Promise<LoggedRequest[]>;
  clearRequests(): Promise<void>;
  reset(): Promise<void>;
  fault(fault: Fault): Promise<void>;
  /** Answer in the spec's dialect or the real service's (a reset restores the spec's). */
  dialect(dialect: Dialect): Promise<void>;
  control(path: string, body?: unknown): Promise<unknown>;
}

/** Every end-to-end suite of a service runs against both dialects of its emulator. */
export const DIALECTS: readonly Dialect[] = ['spec', 'real'];

export interface TestStack {
  stack: StartedStack;
  graphqlUrl: string;
  /** POSTs an operation to the gateway. */
  gql<T = Record<string, unknown>>(query: string, options?: { variables?: Record<string, unknown>; headers?: Record<string, string> }): Promise<GraphQLResult<T>>;
  emulator(service: string): EmulatorControl;
}

async function json(response: Response): Promise<unknown> {
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
}

export function emulatorControl(url: string): EmulatorControl {
  const post = async (path: string, body?: unknown) =>
    json(await fetch(`${url}/__emulator/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) }));
  return {
    url,
    requests: async () => (await json(await fetch(`${url}/__emulator/requests`))) as LoggedRequest[],
    clearRequests: async () => {
      await fetch(`${url}/__emulator/requests`, { method: 'DELETE' });
    },
    reset: async () => {
      await post('reset');
    },
    fault: async (fault) => {
      await post('faults', fault);
    },
    dialect: async (dialect) => {
      const answer = (await post('dialect', { real: dialect === 'real' })) as { dialect?: string } | undefined;
      if (answer?.dialect !== dialect) throw new Error(`the emulator at ${url} refused the ${dialect} dialect: ${JSON.stringify(answer)}`);
    },
    control: post,
  };
}

/**
 * The whole graph on port 0 (emulators, subgraphs, gateway), closed after the file's tests.
 * `env` overrides configuration, as an operator would; `now` is the clock download links expire by.
 */
export async function startTestStack(env: Record<string, string> = {}, { now }: { now?: () => number } = {}): Promise<TestStack> {
  // The services' published rates (one marketplace call a second) would make every suite wait:
  // pacing and the emulators' limits are off unless a test turns them on (test/e2e/upstream-pacing.test.ts).
  const stack = await startStack({ env: { UPSTREAM_PACING: 'off', EMULATOR_RATE_LIMITS: 'off', ...env }, logger: testLogger('stack'), ephemeralPorts: true, ...(now ? { now } : {}) });
  closeAfterFile(() => stack.close());
  const graphqlUrl = stack.gateway.graphqlUrl;
  return {
    stack,
    graphqlUrl,
    async gql(query, { variables, headers } = {}) {
      const response = await fetch(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResult<never>;
    },
    emulator(service) {
      const found = stack.services.find((candidate) => candidate.name === service);
      if (!found?.emulatorUrl) throw new Error(`no emulator for ${service}`);
      return emulatorControl(found.emulatorUrl);
    },
  };
}

/**
 * Another gateway over a test stack's subgraphs, started with its own settings (limits, proxies)
 * and closed after the file.
 */
export async function startGatewayOver(stack: StartedStack, env: Record<string, string>, logName: string): Promise<StartedGateway> {
  const subgraphUrls = Object.fromEntries(stack.services.map((service) => [service.name, service.subgraphUrl]));
  const gateway = await startGateway(readGatewayConfig(env, { port: 0, subgraphUrls }), testLogger(logName));
  // A drain ends in a close, and a gateway closes once: after a test's drain there is nothing left to close.
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= gateway.close());
  closeAfterFile(close);
  return { ...gateway, close, drain: (options) => (closed ??= gateway.drain(options)) };
}
