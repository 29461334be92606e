import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKEN as DASHBOARDS_TOKEN } from '../../../emulators/dashboards/data.ts';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * Issue 14, item 9: an upstream that echoes the caller's credential, in any form and anywhere in
 * its error body, never puts it in front of the client: the message, `fieldErrors` and every
 * other extension are scrubbed of it plain, percent-encoded, and inside base64 or base64url.
 */
const t = await startTestStack();
const recognition = t.emulator('recognition');
const dashboards = t.emulator('dashboards');

beforeEach(async () => {
  await Promise.all([recognition.reset(), dashboards.reset()]);
});

/** Every form the credential could be recognised in, inside surrounding text or bytes. */
function echoesOf(secret: string): string[] {
  const forms = [secret, encodeURIComponent(`${secret} `), `Bearer ${secret}`];
  // At every byte offset inside a longer encoded text, as a Basic header or a JWT would carry it.
  for (const prefix of ['', 'u', 'us', 'user:']) {
    forms.push(Buffer.from(`${prefix}${secret}`).toString('base64'), Buffer.from(`${prefix}${secret}!?`).toString('base64url'));
  }
  return forms;
}

/** Whether any of the credential's forms can still be found in the text. */
function holdsSecret(text: string, secret: string): boolean {
  if (text.includes(secret) || text.includes(encodeURIComponent(secret))) return true;
  // Decode every base64-looking run at every alignment and look for the secret in the bytes.
  for (const run of text.match(/[A-Za-z0-9+/_-]{16,}/g) ?? []) {
    for (let skip = 0; skip < 4; skip += 1) {
      if (Buffer.from(run.slice(skip), 'base64').toString('latin1').includes(secret.slice(2, -2))) return true;
    }
  }
  return false;
}

describe('an upstream echoing the credential', () => {
  it('reaches the client with the message and every field error scrubbed (recognition, token in the query)', async () => {
    const token = DEMO_TOKENS.member;
    const echoes = echoesOf(token);
    await recognition.fault({
      path: '/api/v1/rewards/rw_echo',
      status: 422,
      body: { message: `bad token ${echoes.join(' ')}`, fields: echoes.map((echo, index) => ({ name: `field_${index}_${echo}`, errors: [`you sent ${echo}`] })) },
    });
    const result = await t.gql('{ reward(id: "rw_echo") { id } }', { headers: { 'x-recognition-token': token } });
    expect(result.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT', service: 'recognition', fieldErrors: expect.any(Array) } }]);
    const text = JSON.stringify(result);
    expect(text).toContain('[REDACTED]');
    expect(holdsSecret(text, token), text).toBe(false);
  });

  it('is masked whole where the message is cut short, never cut in half first', async () => {
    const token = DEMO_TOKENS.member;
    await recognition.fault({ path: '/api/v1/rewards/rw_long', status: 500, body: { message: `${'x'.repeat(490)}${token} and more` } });
    const result = await t.gql('{ reward(id: "rw_long") { id } }', { headers: { 'x-recognition-token': token } });
    expect(result.errors).toMatchObject([{ extensions: { code: 'UPSTREAM_ERROR' } }]);
    expect(result.errors![0]!.message).toContain('cut short');
    // Any ten characters of the token would be a leak.
    expect(result.errors![0]!.message).not.toContain(token.slice(0, 10));
  });

  it('is scrubbed the same way from an error body behind any status (dashboards, token in a header)', async () => {
    const echoes = echoesOf(DASHBOARDS_TOKEN);
    await dashboards.fault({ path: '/stats', status: 500, body: { code: 500, message: echoes.join(' | '), detail: { echoed: echoes } } });
    const result = await t.gql('{ dashboardStats { requestCount } }', { headers: { 'x-dashboards-token': DASHBOARDS_TOKEN } });
    expect(result.errors).toMatchObject([{ extensions: { code: 'UPSTREAM_ERROR', service: 'dashboards', status: 500 } }]);
    expect(holdsSecret(JSON.stringify(result), DASHBOARDS_TOKEN)).toBe(false);
  });
});
