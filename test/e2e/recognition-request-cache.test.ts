import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { DIALECTS, startTestStack } from '../support/stack.ts';

// What one request caches of the recognition service: each distinct read once, and nothing that a
// write of the same operation has made stale.

const t = await startTestStack();
const emulator = t.emulator('recognition');
const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
const member = { 'x-recognition-token': DEMO_TOKENS.member };

const apiCalls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}`);
const count = (calls: string[], call: string) => calls.filter((made) => made === call).length;

beforeEach(async () => {
  await emulator.reset();
});

describe.each(DIALECTS)('%s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.dialect(dialect);
  });

  describe('identical reads in one operation', () => {
    it('cost one call per endpoint and arguments, whatever the aliases', async () => {
      const result = await t.gql<Record<string, unknown[]>>(
        `{
          a: hashtagTrends { hashtag } b: hashtagTrends { count }
          c: rewardCatalog { name } d: rewardCatalog { type } e: rewardCatalog(requestCountry: "GB") { name }
          f: leaderboard(team: { managerId: "usr_001" }) { count } g: leaderboard(team: { managerId: "usr_001" }) { user { id } } h: leaderboard { count }
          i: standouts(limit: 5) { count } j: standouts(limit: 5) { user { id } }
          k: apiKeys { id } l: apiKeys { label }
        }`,
        { headers: member },
      );
      expect(result.errors).toBeUndefined();
      const data = result.data!;
      expect(data.a).toHaveLength(data.b!.length);
      expect(data.c).toHaveLength(data.d!.length);
      expect(data.f).toHaveLength(data.g!.length);
      expect(data.h!.length).toBeGreaterThan(data.f!.length);
      expect(data.i).toHaveLength(5);
      expect(data.k).toHaveLength(2);

      const calls = await apiCalls();
      expect(count(calls, 'GET /api/v1/analytics/trends')).toBe(1);
      // The unrestricted catalogue and the GB one are two distinct reads.
      expect(count(calls, 'GET /api/v1/rewards')).toBe(2);
      expect(count(calls, 'GET /api/v1/analytics/leaderboards')).toBe(2);
      expect(count(calls, 'GET /api/v1/analytics/standouts')).toBe(1);
      expect(count(calls, 'GET /api/v1/api_keys')).toBe(1);
      expect(calls).toHaveLength(7);
    });

    it('are fetched again by the next request: nothing is kept between requests', async () => {
      const query = '{ rewardCatalog { name } hashtagTrends { hashtag } }';
      for (let round = 0; round < 2; round += 1) expect((await t.gql(query, { headers: member })).errors).toBeUndefined();
      const calls = await apiCalls();
      expect(count(calls, 'GET /api/v1/rewards')).toBe(2);
      expect(count(calls, 'GET /api/v1/analytics/trends')).toBe(2);
    });

    it('share a failure as they share the call', async () => {
      await emulator.fault({ path: '/api/v1/rewards', status: 500, body: { message: 'boom' }, times: 1 });
      const result = await t.gql('{ a: rewardCatalog { name } b: rewardCatalog { type } }', { headers: member });
      expect(result.data).toEqual({ a: null, b: null });
      expect(result.errors?.map((error) => error.extensions?.code)).toEqual(['UPSTREAM_ERROR', 'UPSTREAM_ERROR']);
      expect(count(await apiCalls(), 'GET /api/v1/rewards')).toBe(1);
    });
  });

  describe('webhook writes in one mutation', () => {
    const createWebhook = async () => {
      const created = await t.gql<{ createWebhook: { id: string } }>('mutation { createWebhook(input: { url: "https://hooks.example/a", eventTypes: [BONUS_CREATED] }) { id } }', { headers: admin });
      expect(created.errors).toBeUndefined();
      await emulator.clearRequests();
      return created.data!.createWebhook.id;
    };

    it('answer each write with the fields as they are after it, reading the list again after every write', async () => {
      const id = await createWebhook();
      const result = await t.gql(
        `mutation {
          a: updateWebhook(id: "${id}", input: { eventTypes: [BONUS_CREATED] }) { url }
          b: updateWebhook(id: "${id}", input: { url: "https://new.example/u1" }) { eventTypes }
          c: updateWebhook(id: "${id}", input: { eventTypes: [ACHIEVEMENT_EVENT_CREATED] }) { id url eventTypes }
        }`,
        { headers: admin },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({
        a: { url: 'https://hooks.example/a' },
        b: { eventTypes: ['BONUS_CREATED'] },
        c: { id, url: 'https://new.example/u1', eventTypes: ['ACHIEVEMENT_EVENT_CREATED'] },
      });
      const put = `PUT /api/v1/webhooks/${id}`;
      expect(await apiCalls()).toEqual([put, 'GET /api/v1/webhooks', put, 'GET /api/v1/webhooks', put, 'GET /api/v1/webhooks']);

      const listed = await t.gql('{ webhooks { id url eventTypes } }', { headers: admin });
      expect(listed.data?.webhooks).toEqual([result.data!.c]);
    });

    it('read the list again after a create or a delete too', async () => {
      const id = await createWebhook();
      const result = await t.gql(
        `mutation {
          a: updateWebhook(id: "${id}", input: { eventTypes: [BONUS_CREATED] }) { url }
          b: createWebhook(input: { url: "https://hooks.example/b" }) { id }
          c: updateWebhook(id: "${id}", input: { eventTypes: [BONUS_CREATED] }) { url }
          d: deleteWebhook(id: "${id}") { id }
          e: updateWebhook(id: "${id}", input: { eventTypes: [BONUS_CREATED] }) { url }
        }`,
        { headers: admin },
      );
      expect(result.data).toMatchObject({ a: { url: 'https://hooks.example/a' }, c: { url: 'https://hooks.example/a' }, d: { id }, e: null });
      expect(result.errors?.map((error) => error.extensions?.code)).toEqual(['NOT_FOUND']);
      const put = `PUT /api/v1/webhooks/${id}`;
      expect(await apiCalls()).toEqual([put, 'GET /api/v1/webhooks', 'POST /api/v1/webhooks', put, 'GET /api/v1/webhooks', `DELETE /api/v1/webhooks/${id}`, put]);
    });
  });
});
