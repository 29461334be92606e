import { describe, expect, it } from 'vitest';
import { DEMO_ADMIN_TOKEN } from '../../emulators/gatewayAdmin/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';

const PROXY_URL = 'https://gateway.example';
const { graphqlUrl, emulator } = await startTestStack({
  GATEWAY_AUTH: 'oauth2',
  AUTH_EXPLORER_API: 'billing',
  AUTH_EXPLORER_CONSUMER: 'partner-portal',
  GATEWAY_ADMIN_TOKEN: DEMO_ADMIN_TOKEN,
  GATEWAY_ADMIN_PROXY_URL: PROXY_URL,
});
const admin = emulator('gatewayAdmin');

/** The operator's steps on the API gateway's admin interface itself, as the guide has them. */
async function form(path: string, fields: Record<string, string>) {
  const response = await fetch(`${admin.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  expect(response.status, `${path}: ${await response.clone().text()}`).toBe(201);
  return (await response.json()) as Record<string, unknown>;
}

describe("the explorer's hints from the gateway administration service", () => {
  it('publish the token endpoint, client id, grant and scopes the API gateway has for the named API, never the secret', async () => {
    await form('/apis', { name: 'billing', uris: '/billing', upstream_url: 'https://billing.internal.example' });
    await form('/consumers', { username: 'partner-portal' });
    const application = await form('/consumers/partner-portal/oauth2', { name: 'explorer', redirect_uri: 'https://portal.example/callback' });
    knownSecrets.add(String(application.client_secret));
    await form('/apis/billing/plugins', { name: 'oauth2', 'config.scopes': 'read,write', 'config.enable_client_credentials': 'true' });

    const metadata = (await (await fetch(graphqlUrl.replace('/graphql', '/.well-known/oauth-protected-resource'))).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      token_endpoint: `${PROXY_URL}/billing/oauth2/token`,
      client_id: application.client_id,
      grant_type: 'client_credentials',
      bearer_methods_supported: ['header'],
    });
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['read', 'write']));
    expect(JSON.stringify(metadata)).not.toContain(String(application.client_secret));
  });
});
