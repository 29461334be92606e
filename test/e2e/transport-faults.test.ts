import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startTestStack } from '../support/stack.ts';

// A short deadline so the timeout case is quick; retries keep their defaults.
const t = await startTestStack({ RECOGNITION_TIMEOUT_MS: '600' });
const emulator = t.emulator('recognition');
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const admin = { 'x-recognition-token': DEMO_TOKENS.admin };

beforeEach(async () => {
  await emulator.reset();
});

const calls = async (path: string) => (await emulator.requests()).filter((request) => request.path === path);

describe('the REST transport', () => {
  it('retries an idempotent read on 502, 503 and 504, then succeeds', async () => {
    await emulator.fault({ path: '/api/v1/redemptions/rd_001', status: 503, times: 1 });
    await emulator.fault({ path: '/api/v1/redemptions/rd_001', status: 502, times: 1 });
    const result = await t.gql('{ redemption(id: "rd_001") { id } }', { headers: member });
    expect(result).toEqual({ data: { redemption: { id: 'rd_001' } } });
    expect((await calls('/api/v1/redemptions/rd_001')).map((request) => request.status)).toEqual([503, 502, 200]);
  });

  it('gives up after its retries with UPSTREAM_ERROR and the last status', async () => {
    await emulator.fault({ path: '/api/v1/webhooks', method: 'GET', status: 504 });
    const result = await t.gql('{ webhooks { id } }', { headers: member });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', status: 504, service: 'recognition' });
    expect(await calls('/api/v1/webhooks')).toHaveLength(3);
  });

  it('never retries a POST', async () => {
    await emulator.fault({ path: '/api/v1/webhooks', method: 'POST', status: 503, times: 1 });
    const result = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/once" }) { id } }', { headers: admin });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', status: 503 });
    expect(await calls('/api/v1/webhooks')).toHaveLength(1);
  });

  it('does not retry a 500', async () => {
    await emulator.fault({ path: '/api/v1/analytics/trends', status: 500 });
    const result = await t.gql('{ hashtagTrends { hashtag } }', { headers: member });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', status: 500 });
    expect(await calls('/api/v1/analytics/trends')).toHaveLength(1);
  });

  it('retries a read whose connection dropped, and reports UPSTREAM_UNAVAILABLE when it keeps dropping', async () => {
    await emulator.fault({ path: '/api/v1/rewards/rw_coffee_5', drop: true, times: 1 });
    const once = await t.gql('{ reward(id: "rw_coffee_5") { id } }', { headers: member });
    expect(once).toEqual({ data: { reward: { id: 'rw_coffee_5' } } });

    await emulator.fault({ path: '/api/v1/rewards/rw_coffee_10', drop: true });
    const always = await t.gql('{ reward(id: "rw_coffee_10") { id } }', { headers: member });
    expect(always.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
    expect(always.data).toEqual({ reward: null });
  });

  it('enforces the deadline: a slow upstream is UPSTREAM_UNAVAILABLE, not a hang', async () => {
    await emulator.fault({ path: '/api/v1/analytics/trends', latencyMs: 1500 });
    const started = Date.now();
    const result = await t.gql('{ hashtagTrends { hashtag } }', { headers: member });
    expect(result.errors?.[0]).toMatchObject({ message: expect.stringContaining('600 ms'), extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('maps 429 to RATE_LIMITED with Retry-After, and 409 to CONFLICT', async () => {
    await emulator.fault({ path: '/api/v1/webhooks', method: 'GET', status: 429, body: { message: 'slow down' } });
    const limited = await t.gql('{ webhooks { id } }', { headers: member });
    expect(limited.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    await emulator.fault({ path: '/api/v1/webhooks', method: 'POST', status: 409, body: { message: 'already subscribed' } });
    const conflict = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/dup" }) { id } }', { headers: admin });
    expect(conflict.errors?.[0]).toMatchObject({ message: 'recognition: already subscribed', extensions: { code: 'CONFLICT' } });
  });

  it('reports a 2xx body that is not JSON as UPSTREAM_ERROR', async () => {
    await emulator.fault({ path: '/api/v1/analytics/trends', status: 200, raw: '<html>maintenance</html>', contentType: 'text/html' });
    const result = await t.gql('{ hashtagTrends { hashtag } }', { headers: member });
    expect(result.errors?.[0]).toMatchObject({ message: 'recognition: the answer was not valid JSON', extensions: { code: 'UPSTREAM_ERROR', status: 200 } });
    expect(result.data).toEqual({ hashtagTrends: null });
  });

  it('accepts an error body that is not JSON and keeps its status', async () => {
    await emulator.fault({ path: '/api/v1/teapot', status: 418, raw: 'short and stout', contentType: 'text/plain' });
    const result = await t.gql('{ teapot }', { headers: member });
    expect(result.errors?.[0]).toMatchObject({ message: 'recognition: short and stout', extensions: { code: 'TEAPOT', status: 418 } });
  });
});
