import { dropAbandonedFieldErrors } from './abandonedFieldErrors.ts';

/**
 * Config is read from the environment once per process and validated before anything starts;
 * a bad value stops the process with a message naming the variable and the fix.
 */

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = Readonly<Record<string, string | undefined>>;

/** An IP address or a host name; what fails to resolve still fails at listen, naming the address. */
const HOST = /^(?:[0-9a-fA-F:.]+|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)$/;

/** `HOST`, the address every server binds to. */
export function readHost(env: Env): string {
  const host = env.HOST;
  if (host === undefined || host === '') return '127.0.0.1';
  if (!HOST.test(host)) throw new ConfigError(`HOST must be an IP address or a host name; got ${JSON.stringify(host)}`);
  return host;
}

/** The levels pino knows, and `silent`. */
const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** `LOG_LEVEL`, or the given default when unset. */
export function readLogLevel(env: Env, fallback: string): string {
  const level = env.LOG_LEVEL;
  if (level === undefined || level === '') return fallback;
  if (!LOG_LEVELS.has(level)) throw new ConfigError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}; got ${JSON.stringify(level)}`);
  return level;
}

export function readPort(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535; got "${raw}". Unset it to use ${fallback}.`);
  }
  return port;
}

export function readInt(env: Env, name: string, fallback: number, range: { min: number; max: number }): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  // Decimal digits only: Number() also reads `0x100`, `1e9` and ` 12 `, which no operator means as a count.
  const value = /^-?[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    throw new ConfigError(`${name} must be a whole number from ${range.min} to ${range.max}; got "${raw}".`);
  }
  return value;
}

/** A URL (http or https unless told otherwise) without a trailing slash, or undefined when unset. */
export function readUrl(env: Env, name: string, protocols: readonly string[] = ['http:', 'https:']): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL such as ${protocols[0]}//host.example; got something that is not a URL.`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.map((protocol) => protocol.replace(':', '')).join(' or ')}; got ${url.protocol.replace(':', '')}`);
  }
  return raw.replace(/\/+$/, '');
}

/** The bearer token `/metrics` asks for (METRICS_TOKEN); unset or blank, the route is open. */
export function readMetricsToken(env: Env): string | undefined {
  const token = env.METRICS_TOKEN?.trim();
  return token ? token : undefined;
}

export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off (also true/false, yes/no, 1/0); got "${env[name]}".`);
}

const codeOf = (error: Error): unknown => (error as Error & { extensions?: { code?: unknown } }).extensions?.code;

/** Runs a process's main function; a ConfigError exits with its message, not a stack. */
export function runMain(main: () => Promise<unknown>): void {
  dropAbandonedFieldErrors();
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
    } else if ((error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE' || (error as NodeJS.ErrnoException | null)?.code === 'EADDRNOTAVAIL') {
      // A port or address the operator chose (README, settings): said in one line, as a bad value is.
      const { code, address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
      console.error(`Configuration error: cannot listen on ${address ?? 'the address'}:${port ?? '?'} (${code === 'EADDRINUSE' ? 'the port is in use' : 'no such address here'}); choose another port or HOST in the settings.`);
    } else if (error instanceof Error && error.name === 'GraphQLError' && typeof codeOf(error) === 'string') {
      // One of our typed refusals (a store such as Redis not answering at start): its message says what to do.
      console.error(`Start-up failed: ${error.message} (${codeOf(error)})`);
    } else {
      console.error(error);
    }
    process.exit(1);
  });
}
