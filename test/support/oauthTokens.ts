import { expect } from 'vitest';
import { knownSecrets } from './logs.ts';

/** An access token for `client` by the client-credentials grant, known to the log checks as a secret. */
export async function clientCredentialsToken(authorizationServerUrl: string, client: { clientId: string; clientSecret: string }): Promise<string> {
  const response = await fetch(`${authorizationServerUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  expect(response.status).toBe(200);
  const { access_token: token } = (await response.json()) as { access_token: string };
  knownSecrets.add(token);
  return token;
}
