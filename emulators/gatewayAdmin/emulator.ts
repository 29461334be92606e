import { createClock, type EmulatorDefinition } from '../kit/emulator.ts';
import { fieldsBody, jsonBody } from '../kit/bodies.ts';
import { adminRoutes } from './admin.ts';
import { seedGatewayAdmin, type Dialect } from './data.ts';
import { oauth2Endpoints } from './oauth2.ts';
import { proxyRoutes } from './proxy.ts';

const DIALECTS: readonly Dialect[] = ['flat', 'structured'];

/**
 * An API gateway as its OAuth 2.0 guide shows it: the admin interface (APIs, consumers, OAuth 2.0
 * applications, the plugin), the plugin's token and authorize endpoints, and the proxy to each
 * API's upstream (behind the plugin's token check), on one origin. Besides the kit's controls:
 * `POST /__emulator/error-dialect {dialect}` switches the admin interface's error bodies, and
 * `POST /__emulator/introspect {token}` answers as RFC 7662 does. (The kit's spec-or-real dialect
 * does not apply: the default here is already the real component's.)
 */
export function createGatewayAdminEmulator(): EmulatorDefinition {
  let state = seedGatewayAdmin();
  const clock = createClock();
  const current = () => state;
  const oauth2 = oauth2Endpoints(current, clock.now);
  return {
    name: 'gatewayAdmin',
    clock,
    // The plugin's endpoints end in /oauth2/token and /oauth2/authorize, which no admin path does;
    // every other path the admin interface does not claim is the proxy's.
    routes: [...oauth2.routes, ...adminRoutes(current, clock.now), ...proxyRoutes(current, clock.now)],
    controls: [
      {
        method: 'POST',
        path: '/__emulator/error-dialect',
        handler: (request) => {
          const dialect = (jsonBody(request) as { dialect?: unknown } | undefined)?.dialect;
          if (!DIALECTS.includes(dialect as Dialect)) return { status: 400, body: { message: `expected {"dialect": ${DIALECTS.map((name) => `"${name}"`).join(' or ')}}` } };
          state.dialect = dialect as Dialect;
          return { status: 200, body: { dialect } };
        },
      },
      {
        method: 'POST',
        path: '/__emulator/introspect',
        handler: async (request) => {
          const token = (await fieldsBody(request))?.token;
          if (typeof token !== 'string' || !token) return { status: 400, body: { error: 'invalid_request', error_description: 'token is required' } };
          return { status: 200, body: oauth2.introspect(token), headers: { 'cache-control': 'no-store' } };
        },
      },
    ],
    reset: () => {
      state = seedGatewayAdmin();
    },
  };
}
