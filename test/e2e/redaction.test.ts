import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { capturedLogs, knownSecrets } from '../support/logs.ts';
import { startTestStack } from '../support/stack.ts';

const t = await startTestStack({ RECOGNITION_TIMEOUT_MS: '400' });
const emulator = t.emulator('recognition');

describe('credentials never leak', () => {
  it('appear in no log line, response, error or metric, whatever goes wrong', async () => {
    const wrong = 'not-a-real-token-3f8a1c9e7d';
    knownSecrets.add(wrong);
    const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
    await emulator.fault({ path: '/api/v1/analytics/trends', latencyMs: 800, times: 1 });
    await emulator.fault({ path: '/api/v1/rewards/rw_coffee_5', drop: true });
    await emulator.fault({ path: '/api/v1/webhooks', method: 'GET', status: 500, body: { message: `echoing access_token=${DEMO_TOKENS.admin}` } });

    const responses = [
      await t.gql('{ hashtagTrends { hashtag } reward(id: "rw_coffee_5") { id } webhooks { id } teapot }', { headers: admin }),
      await t.gql('{ apiKeys { id } }', { headers: { 'x-recognition-token': wrong } }),
      await t.gql('mutation { createApiKey(input: { label: "leak test" }) { token } }', { headers: admin }),
      await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/x" }) { id } }', { headers: { 'x-recognition-token': DEMO_TOKENS.readOnly } }),
      await t.gql('{ redemptions(ids: ["rd_001", "rd_002"]) { reward { name } } }', { headers: { 'x-recognition-token': DEMO_TOKENS.member } }),
    ];
    const created = (responses[2]!.data as { createApiKey: { token: string } }).createApiKey.token;
    knownSecrets.add(created);

    // The scenario really exercised the failure paths that log.
    const log = capturedLogs.join('');
    expect(log).toContain('upstream call failed');
    expect(log).toContain('"status":500');
    expect(responses[0]!.errors?.map((error) => error.extensions?.code).sort()).toEqual(['TEAPOT', 'UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);

    const metrics = await (await fetch(`${t.stack.gateway.url}/metrics`)).text();
    const subgraphMetrics = await (await fetch(t.stack.services[0]!.subgraphUrl.replace('/graphql', '/metrics'))).text();
    const emulatorLog = JSON.stringify(await emulator.requests());
    for (const secret of knownSecrets) {
      if (secret === created) {
        // The new token is shown once, to its creator, and nowhere else.
        expect(JSON.stringify(responses.filter((_, index) => index !== 2))).not.toContain(secret);
      } else {
        expect(JSON.stringify(responses)).not.toContain(secret);
      }
      expect(log).not.toContain(secret);
      expect(metrics).not.toContain(secret);
      expect(subgraphMetrics).not.toContain(secret);
      expect(emulatorLog).not.toContain(secret);
    }
    // The echoed token in an upstream error message is scrubbed, not passed on.
    expect(JSON.stringify(responses[0])).toContain('[REDACTED]');
  });
});
