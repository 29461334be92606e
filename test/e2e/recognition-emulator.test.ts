import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulators/kit/emulator.ts';
import { createRecognitionEmulator } from '../../emulators/recognition/emulator.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { emulatorControl } from '../support/stack.ts';

/** The emulator is the upstream of every other test: hold it to the spec directly. */
const started = await startEmulator(createRecognitionEmulator(), 0);
afterAll(() => started.close());
const api = `${started.url}/api/v1`;
const control = emulatorControl(started.url);

beforeEach(() => control.reset());

const get = (path: string, init: RequestInit = {}) => fetch(`${api}${path}`, init);

describe('recognition emulator', () => {
  it('answers a missing or unknown token with the documented 401 body', async () => {
    for (const response of [await get('/api_keys'), await get('/api_keys?access_token=nope')]) {
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ success: false, message: 'Bad or missing access token' });
    }
  });

  it('accepts the token as access_token and as a bearer header for reads', async () => {
    expect((await get(`/api_keys?access_token=${DEMO_TOKENS.member}`)).status).toBe(200);
    expect((await get('/api_keys', { headers: { authorization: `Bearer ${DEMO_TOKENS.member}` } })).status).toBe(200);
  });

  it('wants writes authenticated by a bearer header, as the real service does', async () => {
    const inQuery = await fetch(`${api}/webhooks?access_token=${DEMO_TOKENS.admin}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://x.example' }) });
    expect(inQuery.status).toBe(401);
  });

  it('refuses writes with a read-only key and user_id from a non-admin, with 403 {success:false, message}', async () => {
    const readOnly = await fetch(`${api}/api_keys?label=x`, { method: 'POST', headers: { authorization: `Bearer ${DEMO_TOKENS.readOnly}` } });
    expect(readOnly.status).toBe(403);
    expect(await readOnly.json()).toMatchObject({ success: false, message: expect.any(String) });
    const member = await get('/api_keys?user_id=usr_001', { headers: { authorization: `Bearer ${DEMO_TOKENS.member}` } });
    expect(member.status).toBe(403);
    expect(await member.json()).toMatchObject({ success: false });
    const admin = await get('/api_keys?user_id=usr_002', { headers: { authorization: `Bearer ${DEMO_TOKENS.admin}` } });
    expect(admin.status).toBe(200);
  });

  it('returns a new key’s token only in the response header of a 201', async () => {
    const response = await fetch(`${api}/api_keys?label=ci&read_only=true`, { method: 'POST', headers: { authorization: `Bearer ${DEMO_TOKENS.admin}` } });
    expect(response.status).toBe(201);
    const token = response.headers.get('x-recognition-authentication-token');
    expect(token).toBeTruthy();
    const body = await response.json();
    expect(body).toEqual({ success: true, message: 'API key created' });
    expect(JSON.stringify(body)).not.toContain(token!);
    const blank = await fetch(`${api}/api_keys?label=`, { method: 'POST', headers: { authorization: `Bearer ${DEMO_TOKENS.admin}` } });
    expect(blank.status).toBe(400);
    expect(await blank.json()).toEqual({ success: false, message: "Label can't be blank" });
  });

  it('answers a missing redemption with an empty 404 and a missing reward with {message}', async () => {
    const redemption = await get(`/redemptions/rd_999?access_token=${DEMO_TOKENS.member}`);
    expect(redemption.status).toBe(404);
    expect(await redemption.text()).toBe('');
    const reward = await get(`/rewards/none?access_token=${DEMO_TOKENS.member}`);
    expect(reward.status).toBe(404);
    expect(await reward.json()).toEqual({ message: 'Object not found' });
  });

  it('states the allowed range when standouts limit is out of range', async () => {
    const response = await get(`/analytics/standouts?limit=0&access_token=${DEMO_TOKENS.member}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ message: 'limit must satisfy 1 <= limit <= 100' });
  });

  it('sends trend counts as text and answers 449 while analytics are not ready', async () => {
    const trends = (await (await get(`/analytics/trends?access_token=${DEMO_TOKENS.member}`)).json()) as { count: unknown }[];
    expect(typeof trends[0]!.count).toBe('string');
    await control.control('analytics', { ready: false });
    const notReady = await get(`/analytics/trends?access_token=${DEMO_TOKENS.member}`);
    expect(notReady.status).toBe(449);
    expect(((await notReady.json()) as { message: string }).message).toMatch(/5 minutes/);
  });

  it('accepts a webhook update as form-urlencoded with a JSON-shaped body, as the spec’s example sends it', async () => {
    const created = (await (
      await fetch(`${api}/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${DEMO_TOKENS.admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://a.example' }) })
    ).json()) as { id: string };
    const updated = await fetch(`${api}/webhooks/${created.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${DEMO_TOKENS.admin}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({ event_types: ['bonus.created'] }),
    });
    expect(await updated.json()).toEqual({ id: created.id });
    const list = await (await get(`/webhooks?access_token=${DEMO_TOKENS.admin}`)).json();
    expect(list).toEqual([{ id: created.id, url: 'https://a.example', event_types: ['bonus.created'] }]);
    const empty = await fetch(`${api}/webhooks/${created.id}`, { method: 'PUT', headers: { authorization: `Bearer ${DEMO_TOKENS.admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: '' }) });
    expect(empty.status).toBe(400);
  });

  it('logs requests with secrets masked and header names only; unknown routes fail loudly', async () => {
    await get(`/teapot?access_token=${DEMO_TOKENS.member}`);
    await get('/nothing-here');
    const log = await control.requests();
    expect(log[0]).toMatchObject({ method: 'GET', path: '/api/v1/teapot', query: { access_token: '[REDACTED]' }, status: 418 });
    expect(log[1]).toMatchObject({ path: '/api/v1/nothing-here', status: 404, unmatched: true });
    expect(JSON.stringify(log)).not.toContain(DEMO_TOKENS.member);
  });
});
