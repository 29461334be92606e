import { readPort, type Env } from '../lib/config.ts';
import type { Started } from '../lib/http.ts';
import { startEmulator } from '../emulators/kit/emulator.ts';
import { createAuthorizationServer, DEMO_AUDIENCE, DEMO_PARTNER, DEMO_READER, GRAPH_CLIENT } from '../emulators/authorization-server/emulator.ts';

export const DEFAULT_AUTH_SERVER_PORT = 4099;

/**
 * `GATEWAY_AUTH=oauth2` with no authorization server named: the demo's own, on one machine. Its
 * two partners (read-write and read-only) have the demo service credentials preloaded in the graph,
 * so they never send an upstream key.
 */
export async function startDemoAuthorization(env: Env, { ephemeralPorts, host, demoHeaders }: { ephemeralPorts: boolean; host: string; demoHeaders: Record<string, string> }): Promise<{ started: Started; env: Env; principalCredentials: Record<string, Record<string, string>> } | undefined> {
  if ((env.GATEWAY_AUTH ?? 'off').toLowerCase() !== 'oauth2' || env.AUTH_JWKS_URL || env.AUTH_INTROSPECTION_URL || env.TRUSTED_PROXIES) return undefined;
  const server = await createAuthorizationServer();
  const started = await startEmulator(server.definition, ephemeralPorts ? 0 : readPort(env, 'AUTH_SERVER_EMULATOR_PORT', DEFAULT_AUTH_SERVER_PORT), host);
  server.setIssuer(started.url);
  return {
    started,
    env: {
      ...env,
      AUTH_ISSUER: started.url,
      AUTH_JWKS_URL: `${started.url}/.well-known/jwks.json`,
      AUTH_AUDIENCE: DEMO_AUDIENCE,
      AUTH_INTROSPECTION_URL: `${started.url}/oauth2/introspect`,
      AUTH_INTROSPECTION_CLIENT_ID: GRAPH_CLIENT.clientId,
      AUTH_INTROSPECTION_CLIENT_SECRET: GRAPH_CLIENT.clientSecret,
      AUTH_TOKEN_URL: `${started.url}/oauth2/token`,
      AUTH_SCOPES: DEMO_PARTNER.scopes.join(' '),
    },
    principalCredentials: { [DEMO_PARTNER.clientId]: demoHeaders, [DEMO_READER.clientId]: demoHeaders },
  };
}
