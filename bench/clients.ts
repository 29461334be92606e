import { Pool } from 'undici';
import type { Upstream } from './operations.ts';

/**
 * Sockets per emulator for the floor: the subgraph's REST transport pools 64 per upstream origin,
 * so the floor's client gets the same budget.
 */
const FLOOR_CONNECTIONS = 64;

export interface GraphClient {
  /** POSTs a request body (`{query, variables}` as JSON); resolves to `data`, throws on a non-200 answer or any GraphQL error. */
  execute(body: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface UpstreamClient extends Upstream {
  close(): Promise<void>;
}

/** Keep-alive sockets to the gateway, one per concurrent caller, as a client in production would hold. */
export function createGraphClient(graphqlUrl: string, headers: Record<string, string>, connections: number): GraphClient {
  const url = new URL(graphqlUrl);
  const pool = new Pool(url.origin, { connections, pipelining: 1 });
  const requestHeaders = { ...headers, 'content-type': 'application/json' };
  return {
    async execute(body) {
      const response = await pool.request({ method: 'POST', path: url.pathname, headers: requestHeaders, body });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}: ${text.slice(0, 300)}`);
      const result = JSON.parse(text) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
      if (result.errors?.length) throw new Error(`gateway errors: ${result.errors.map((error) => `${error.extensions?.code ?? ''} ${error.message}`).join('; ')}`);
      if (!result.data) throw new Error('gateway answered no data');
      return result.data;
    },
    close: () => pool.close(),
  };
}

export function createUpstreamClient(origins: Record<string, string>): UpstreamClient {
  const pools = new Map(Object.entries(origins).map(([service, origin]) => [service, new Pool(origin, { connections: FLOOR_CONNECTIONS, pipelining: 1 })]));
  return {
    async get(service, path, headers) {
      const pool = pools.get(service);
      if (!pool) throw new Error(`no emulator for ${service}`);
      const response = await pool.request({ method: 'GET', path, headers: { accept: 'application/json', ...headers } });
      const text = await response.body.text();
      if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`${service} answered ${response.statusCode} to GET ${path.split('?')[0]}`);
      return JSON.parse(text);
    },
    async close() {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    },
  };
}
