import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_PARTNER } from '../../emulators/authorization-server/emulator.ts';
import { DEMO_ADMIN_TOKEN } from '../../emulators/gatewayAdmin/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { clientCredentialsToken } from '../support/oauthTokens.ts';
import { emulatorControl, startTestStack } from '../support/stack.ts';

/**
 * With the graph's own sign-in on, an administration field needs the `gateway:admin` scope (the
 * gateway checks it before planning) and the admin token, which the graph may hold for the
 * administrator's principal so that the token alone is enough.
 */
const ADMIN_CLIENT = { clientId: 'gateway-operator', clientSecret: 'gateway-operator-secret-5e1c8a3f9b2d', scopes: ['gateway:admin'] };
const SCOPED_ONLY = { clientId: 'scoped-without-token', clientSecret: 'scoped-without-token-secret-7a2c', scopes: ['gateway:admin'] };
for (const { clientSecret } of [ADMIN_CLIENT, SCOPED_ONLY, DEMO_PARTNER]) knownSecrets.add(clientSecret);

const dir = mkdtempSync(join(tmpdir(), 'gateway-admin-oauth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const credentialsFile = join(dir, 'credentials.json');
writeFileSync(credentialsFile, JSON.stringify({ principals: { [ADMIN_CLIENT.clientId]: { 'x-gateway-admin-token': DEMO_ADMIN_TOKEN } } }));

const t = await startTestStack({ GATEWAY_AUTH: 'oauth2', AUTH_CREDENTIALS_FILE: credentialsFile });
const authServer = emulatorControl(t.stack.authorizationServerUrl!);
const emulator = t.emulator('gatewayAdmin');
await authServer.control('clients', ADMIN_CLIENT);
await authServer.control('clients', SCOPED_ONLY);

beforeEach(() => emulator.reset());

async function bearerFor(client: { clientId: string; clientSecret: string }): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await clientCredentialsToken(t.stack.authorizationServerUrl!, client)}` };
}

const CREATE = 'mutation { createConsumer(input: { username: "partner" }) { username } }';

describe('gatewayAdmin with the graph signed in with OAuth 2.0', () => {
  it('a token with gateway:admin, whose principal the graph holds the admin token for, administers with no admin header', async () => {
    const result = await t.gql(CREATE, { headers: await bearerFor(ADMIN_CLIENT) });
    expect(result).toEqual({ data: { createConsumer: { username: 'partner' } } });
    expect((await emulator.requests()).map((request) => `${request.method} ${request.path}`)).toEqual(['POST /consumers']);
  });

  it('a token without gateway:admin is FORBIDDEN by the gateway, even holding the admin token and sending it', async () => {
    // The demo partner holds every demo credential, the admin token among them, and may read and write every service.
    const partner = await bearerFor(DEMO_PARTNER);
    for (const headers of [partner, { ...partner, 'x-gateway-admin-token': DEMO_ADMIN_TOKEN }]) {
      const result = await t.gql(CREATE, { headers });
      expect(result.data).toEqual({ createConsumer: null });
      expect(result.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN', field: 'Mutation.createConsumer' } }]);
    }
    expect(await emulator.requests()).toEqual([]);
  });

  it('the scope without the admin token is FORBIDDEN by the subgraph; with the token sent, it administers', async () => {
    const scoped = await bearerFor(SCOPED_ONLY);
    const refused = await t.gql(CREATE, { headers: scoped });
    expect(refused.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN', service: 'gatewayAdmin' } }]);
    expect(await emulator.requests()).toEqual([]);
    expect((await t.gql(CREATE, { headers: { ...scoped, 'x-gateway-admin-token': DEMO_ADMIN_TOKEN } })).data).toEqual({ createConsumer: { username: 'partner' } });
  });
});
