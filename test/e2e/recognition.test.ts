import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { knownSecrets } from '../support/logs.ts';
import { DIALECTS, startTestStack } from '../support/stack.ts';

const t = await startTestStack();
const emulator = t.emulator('recognition');
const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
const member = { 'x-recognition-token': DEMO_TOKENS.member };
const readOnly = { 'x-recognition-token': DEMO_TOKENS.readOnly };

beforeEach(async () => {
  await emulator.reset();
});

const codes = (result: { errors?: { extensions?: Record<string, unknown> }[] }) => result.errors?.map((error) => error.extensions?.code);
const apiCalls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}`);

describe.each(DIALECTS)('%s dialect', (dialect) => {
  beforeEach(async () => {
    await emulator.dialect(dialect);
  });

  describe('API keys', () => {
    it('lists the caller’s keys, reading with the token in the query', async () => {
      const result = await t.gql('{ apiKeys { id label readOnly } }', { headers: member });
      expect(result.errors).toBeUndefined();
      expect(result.data?.apiKeys).toEqual([
        expect.objectContaining({ label: 'Demo member key', readOnly: false }),
        expect.objectContaining({ label: 'Demo read-only key', readOnly: true }),
      ]);
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'GET', path: '/api/v1/api_keys', query: { access_token: '[REDACTED]' } });
      expect(call!.headers).not.toContain('authorization');
    });

    it('lets an admin list another user’s keys and refuses a member', async () => {
      const asAdmin = await t.gql('{ apiKeys(userId: "usr_002") { label } }', { headers: admin });
      expect(asAdmin.data?.apiKeys).toHaveLength(2);
      const asMember = await t.gql('{ apiKeys(userId: "usr_001") { label } }', { headers: member });
      expect(asMember.data?.apiKeys).toBeNull();
      expect(asMember.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', service: 'recognition', status: 403 });
    });

    it('creates a key with a bearer token and returns the new token once, from the response header', async () => {
      const result = await t.gql<{ createApiKey: { token: string; label: string; readOnly: boolean; success: boolean } }>(
        'mutation { createApiKey(input: { label: "CI pipeline", readOnly: true }) { success message token label readOnly } }',
        { headers: admin },
      );
      expect(result.errors).toBeUndefined();
      const created = result.data!.createApiKey;
      knownSecrets.add(created.token);
      expect(created).toMatchObject({ success: true, label: 'CI pipeline', readOnly: true });
      expect(created.token).toMatch(/^key-/);

      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'POST', path: '/api/v1/api_keys', query: { label: 'CI pipeline', read_only: 'true' } });
      expect(call!.headers).toContain('authorization');
      expect(call!.query).not.toHaveProperty('access_token');

      // The new read-only token works for reads and cannot write.
      const withNew = { 'x-recognition-token': created.token };
      expect((await t.gql('{ apiKeys { label } }', { headers: withNew })).errors).toBeUndefined();
      const write = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/x" }) { id } }', { headers: withNew });
      expect(codes(write)).toEqual(['FORBIDDEN']);
    });

    it('lets an admin create a key for another user; a member passing userId is refused', async () => {
      const ok = await t.gql<{ createApiKey: { token: string } }>('mutation { createApiKey(input: { label: "for bo", userId: "usr_002" }) { token } }', { headers: admin });
      knownSecrets.add(ok.data!.createApiKey.token);
      expect(ok.errors).toBeUndefined();
      const refused = await t.gql('mutation { createApiKey(input: { label: "sneaky", userId: "usr_003" }) { token } }', { headers: member });
      expect(codes(refused)).toEqual(['FORBIDDEN']);
    });

    it('refuses a blank label before calling the service', async () => {
      const result = await t.gql('mutation { createApiKey(input: { label: "   " }) { token } }', { headers: admin });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.label' });
      expect(await apiCalls()).toEqual([]);
    });

    it('maps the service’s own 400 for a blank label, should one get through', async () => {
      await emulator.fault({ path: '/api/v1/api_keys', method: 'POST', status: 400, body: { success: false, message: "Label can't be blank" } });
      const result = await t.gql('mutation { createApiKey(input: { label: "x" }) { token } }', { headers: admin });
      expect(result.errors?.[0]).toMatchObject({ message: "recognition: Label can't be blank", extensions: { code: 'BAD_USER_INPUT', status: 400 } });
    });

    it('reads a 2xx `success: false` on key writes as the service’s failure with its reason, never as data', async () => {
      await emulator.fault({ path: '/api/v1/api_keys/*', method: 'DELETE', status: 200, body: { success: false, message: 'You do not have permission' }, times: 1 });
      const deleted = await t.gql('mutation { deleteApiKey(id: "k1") { id success message } }', { headers: admin });
      expect(deleted.data).toEqual({ deleteApiKey: null });
      expect(deleted.errors?.[0]).toMatchObject({ message: 'recognition: deleteApiKey failed: You do not have permission', extensions: { code: 'UPSTREAM_ERROR', status: 200 } });
      await emulator.fault({ path: '/api/v1/api_keys', method: 'POST', status: 200, body: { success: false, message: 'Label cannot be blank' }, times: 1 });
      const created = await t.gql('mutation { createApiKey(input: { label: "x" }) { token } }', { headers: admin });
      expect(created.errors?.[0]).toMatchObject({ message: 'recognition: createApiKey failed: Label cannot be blank', extensions: { code: 'UPSTREAM_ERROR', status: 200 } });
    });

    it('refuses writes with a read-only key', async () => {
      const result = await t.gql('mutation { createApiKey(input: { label: "nope" }) { token } }', { headers: readOnly });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    });

    it('deletes a key, and reports a key that does not exist as NOT_FOUND', async () => {
      const listed = await t.gql<{ apiKeys: { id: string }[] }>('{ apiKeys { id label } }', { headers: member });
      const readOnlyKey = listed.data!.apiKeys[1]!;
      const deleted = await t.gql(`mutation { deleteApiKey(id: "${readOnlyKey.id}") { id success message } }`, { headers: member });
      expect(deleted.data?.deleteApiKey).toEqual({ id: readOnlyKey.id, success: true, message: 'API key destroyed' });
      const again = await t.gql(`mutation { deleteApiKey(id: "${readOnlyKey.id}") { id } }`, { headers: member });
      expect(codes(again)).toEqual(['NOT_FOUND']);
    });
  });

  describe('authentication', () => {
    it('answers a missing credential with UNAUTHENTICATED and calls nothing', async () => {
      const result = await t.gql('{ apiKeys { id } hashtagTrends { hashtag } }');
      expect(codes(result)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
      expect(result.errors?.[0]?.message).toContain('x-recognition-token');
      expect(await apiCalls()).toEqual([]);
    });

    it('maps the service’s 401 to UNAUTHENTICATED without echoing the token', async () => {
      const wrong = 'wrong-token-5c1d9e7a3b2f';
      knownSecrets.add(wrong);
      const result = await t.gql('{ apiKeys { id } }', { headers: { 'x-recognition-token': wrong } });
      expect(result.errors?.[0]).toMatchObject({ message: 'recognition: Bad or missing access token', extensions: { code: 'UNAUTHENTICATED', status: 401 } });
      expect(JSON.stringify(result)).not.toContain(wrong);
    });
  });

  describe('analytics', () => {
    it('returns hashtag trends with counts as numbers', async () => {
      const result = await t.gql<{ hashtagTrends: { hashtag: string; count: number }[] }>('{ hashtagTrends { hashtag count } }', { headers: member });
      expect(result.errors).toBeUndefined();
      expect(result.data!.hashtagTrends.length).toBeGreaterThan(3);
      for (const trend of result.data!.hashtagTrends) {
        expect(trend.hashtag).toMatch(/^#/);
        expect(typeof trend.count).toBe('number');
      }
    });

    it('turns 449 into DATA_NOT_READY with a five-minute retry', async () => {
      await emulator.control('analytics', { ready: false });
      const result = await t.gql('{ hashtagTrends { hashtag } leaderboard { count } standouts { count } }', { headers: member });
      expect(result.errors).toHaveLength(3);
      for (const error of result.errors!) expect(error.extensions).toMatchObject({ code: 'DATA_NOT_READY', retryAfterSeconds: 300, status: 449, service: 'recognition' });
      expect(result.data).toEqual({ hashtagTrends: null, leaderboard: null, standouts: null });
    });

    it('ranks users with dates sent as DD Mon YYYY and a manager as the team scope', async () => {
      const result = await t.gql<{ leaderboard: { count: number; user: { id: string; displayName: string; customProperties: { name: string; value: string }[] } }[] }>(
        `{ leaderboard(direction: GIVEN, hashtag: "teamwork", team: { managerId: "usr_001" }, startDate: "2026-01-05", endDate: "2026-12-31") {
            count user { id displayName customProperties { name value } } } }`,
        { headers: admin },
      );
      expect(result.errors).toBeUndefined();
      const [call] = await emulator.requests();
      expect(call!.query).toMatchObject({ direction: 'given', hashtag: 'teamwork', scope: 'usr_001', start_date: '05 Jan 2026', end_date: '31 Dec 2026' });
      for (const entry of result.data!.leaderboard) {
        expect(entry.count).toBeGreaterThan(0);
        expect(entry.user.customProperties.map((property) => property.name).sort()).toEqual(['department', 'location']);
      }
    });

    it('sends custom properties as a JSON scope', async () => {
      const result = await t.gql<{ leaderboard: { user: { customProperties: { name: string; value: string }[] } }[] }>(
        '{ leaderboard(team: { customProperties: [{ name: "department", value: "Sales" }] }) { count user { customProperties { name value } } } }',
        { headers: admin },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!.leaderboard.length).toBeGreaterThan(0);
      for (const entry of result.data!.leaderboard) expect(entry.user.customProperties).toContainEqual({ name: 'department', value: 'Sales' });
      const [call] = await emulator.requests();
      expect(JSON.parse(call!.query.scope!)).toEqual({ department: 'Sales' });
    });

    it('refuses an ambiguous team, reversed dates and an invalid date before calling', async () => {
      const both = await t.gql('{ leaderboard(team: { managerId: "usr_001", customProperties: [{ name: "a", value: "b" }] }) { count } }', { headers: admin });
      expect(both.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'team' });
      const reversed = await t.gql('{ leaderboard(startDate: "2026-02-01", endDate: "2026-01-01") { count } }', { headers: admin });
      expect(reversed.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'startDate' });
      const invalid = await t.gql('query ($d: Date) { leaderboard(startDate: $d) { count } }', { headers: admin, variables: { d: '2026-02-30' } });
      expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'startDate' });
      expect(await apiCalls()).toEqual([]);
    });

    it('shows balances only to admins', async () => {
      const query = '{ leaderboard { user { id earningBalance } } }';
      const asAdmin = await t.gql<{ leaderboard: { user: { earningBalance: number | null } }[] }>(query, { headers: admin });
      expect(asAdmin.data!.leaderboard.every((entry) => typeof entry.user.earningBalance === 'number')).toBe(true);
      const asMember = await t.gql<{ leaderboard: { user: { id: string; earningBalance: number | null } }[] }>(query, { headers: member });
      expect(asMember.data!.leaderboard.filter((entry) => entry.user.id !== 'usr_002').every((entry) => entry.user.earningBalance === null)).toBe(true);
    });

    it('serves the deprecated standouts, checking limit locally', async () => {
      const ok = await t.gql<{ standouts: unknown[] }>('{ standouts(limit: 5, period: "quarter", customPropertyName: "location", customPropertyValue: "Lisbon") { count user { id } } }', { headers: member });
      expect(ok.errors).toBeUndefined();
      expect(ok.data!.standouts).toHaveLength(5);
      const [call] = await emulator.requests();
      expect(call!.query).toMatchObject({ limit: '5', period: 'quarter', custom_property_name: 'location', custom_property_value: 'Lisbon' });

      await emulator.clearRequests();
      for (const limit of [0, 101]) {
        const refused = await t.gql(`{ standouts(limit: ${limit}) { count } }`, { headers: member });
        expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'limit' });
      }
      expect(await apiCalls()).toEqual([]);

      const upstream400 = await t.gql('{ standouts(period: "decade") { count } }', { headers: member });
      expect(upstream400.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', status: 400 });
    });

    it('marks standouts deprecated with its reason', async () => {
      const result = await t.gql<{ __type: { fields: { name: string; isDeprecated: boolean; deprecationReason: string }[] } }>(
        '{ __type(name: "Query") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }',
      );
      const standouts = result.data!.__type.fields.find((field) => field.name === 'standouts');
      expect(standouts).toMatchObject({ isDeprecated: true });
      expect(standouts!.deprecationReason).toContain('leaderboard');
    });
  });

  describe('rewards and redemptions', () => {
    it('lists the catalogue in groups, and resolves a denomination’s full reward', async () => {
      const result = await t.gql<{ rewardCatalog: { type: string; rewards: { name: string; denominations: { id: string; displayPrice: string; reward: { id: string; quantity: number; displayPrice: string } }[] }[] }[] }>(
        '{ rewardCatalog(requestCountry: "GB") { type name rewards { name minimumDisplayPrice description { text html } denominations { id displayPrice reward { id quantity displayPrice } } } } }',
        { headers: member },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!.rewardCatalog.map((group) => group.type)).toEqual(['gift_card', 'donation', 'company']);
      const denominations = result.data!.rewardCatalog.flatMap((group) => group.rewards.flatMap((reward) => reward.denominations));
      for (const denomination of denominations) {
        expect(denomination.reward.id).toBe(denomination.id);
        expect(denomination.reward.displayPrice).toBe(denomination.displayPrice);
        expect(denomination.displayPrice).toMatch(/^£/);
      }
      const calls = await apiCalls();
      expect(calls.filter((call) => call === 'GET /api/v1/rewards')).toHaveLength(1);
      expect(calls.filter((call) => call.startsWith('GET /api/v1/rewards/'))).toHaveLength(denominations.length);
    });

    it('maps the catalogue’s invalid-params 400', async () => {
      const result = await t.gql('{ rewardCatalog(catalogCountry: "ZZ") { name } }', { headers: member });
      expect(result.errors?.[0]).toMatchObject({ message: expect.stringContaining('catalog_country'), extensions: { code: 'BAD_USER_INPUT', status: 400 } });
    });

    it('returns a reward by id, and null without an error when there is none', async () => {
      const found = await t.gql('{ reward(id: "rw_coffee_5", requestCountry: "PT") { id name price displayPrice type quantity imageUrl } }', { headers: member });
      expect(found.data?.reward).toMatchObject({ id: 'rw_coffee_5', price: 500, displayPrice: '€4.60', type: 'gift_card' });
      const missing = await t.gql('{ reward(id: "rw_nothing") { id } }', { headers: member });
      expect(missing).toEqual({ data: { reward: null } });
    });

    it('returns a redemption with its reward, and null for an empty 404', async () => {
      const found = await t.gql('{ redemption(id: "rd_001") { id state createdAt autoApprovable rewardDetails { id name } reward { id name price } } }', { headers: member });
      expect(found.errors).toBeUndefined();
      expect(found.data?.redemption).toMatchObject({ id: 'rd_001', rewardDetails: { id: 'rw_bookshop_10' }, reward: { id: 'rw_bookshop_10', price: 1000 } });
      const missing = await t.gql('{ redemption(id: "rd_999") { id } }', { headers: member });
      expect(missing).toEqual({ data: { redemption: null } });
    });

    it('fetches each distinct reward once when many redemptions share rewards', async () => {
      const ids = Array.from({ length: 40 }, (_, index) => `rd_${String(index + 1).padStart(3, '0')}`);
      const result = await t.gql<{ redemptions: { id: string; reward: { id: string } }[] }>(
        'query ($ids: [ID!]!) { redemptions(ids: $ids) { id reward { id name } } again: redemption(id: "rd_001") { reward { id } } }',
        { headers: member, variables: { ids } },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!.redemptions.map((redemption) => redemption.id)).toEqual(ids);
      const distinctRewards = new Set(result.data!.redemptions.map((redemption) => redemption.reward.id));
      expect(distinctRewards.size).toBe(8);
      const calls = await apiCalls();
      expect(calls.filter((call) => call.startsWith('GET /api/v1/redemptions/'))).toHaveLength(40);
      expect(calls.filter((call) => call.startsWith('GET /api/v1/rewards/'))).toHaveLength(8);
      expect(new Set(calls).size).toBe(calls.length);
    });

    it('asks for a redemption’s reward as soon as that redemption arrives, not when the slowest one does', async () => {
      await emulator.fault({ path: '/api/v1/redemptions/rd_001', latencyMs: 600, times: 1 });
      const result = await t.gql<{ redemptions: { id: string; reward: { id: string } }[] }>('query ($ids: [ID!]!) { redemptions(ids: $ids) { id reward { id } } }', {
        headers: member,
        variables: { ids: ['rd_001', 'rd_002'] },
      });
      expect(result.errors).toBeUndefined();
      const [slow, fast] = result.data!.redemptions;
      expect(slow!.reward.id).not.toBe(fast!.reward.id);
      const log = await emulator.requests();
      const arrival = (path: string) => Date.parse(log.find((request) => request.path === path)!.at);
      const slowAsked = arrival('/api/v1/redemptions/rd_001');
      // The fast redemption's reward went out while the slow redemption was still held upstream.
      expect(arrival(`/api/v1/rewards/${fast!.reward.id}`) - slowAsked).toBeLessThan(400);
      expect(arrival(`/api/v1/rewards/${slow!.reward.id}`) - slowAsked).toBeGreaterThanOrEqual(600);
    });

    it('nulls a failing redemption with its error at its index, and a missing one without an error', async () => {
      await emulator.fault({ path: '/api/v1/redemptions/rd_002', status: 500, body: { message: 'boom' } });
      const result = await t.gql<{ redemptions: ({ id: string } | null)[] }>('query ($ids: [ID!]!) { redemptions(ids: $ids) { id } }', {
        headers: member,
        variables: { ids: ['rd_001', 'rd_002', 'rd_999'] },
      });
      expect(result.data?.redemptions).toEqual([{ id: 'rd_001' }, null, null]);
      expect(result.errors).toHaveLength(1);
      expect(result.errors![0]).toMatchObject({ path: ['redemptions', 1], extensions: { code: 'UPSTREAM_ERROR', service: 'recognition', status: 500 } });
    });

    it('answers a redemption list without a credential with one UNAUTHENTICATED, calling nothing', async () => {
      const result = await t.gql('query ($ids: [ID!]!) { redemptions(ids: $ids) { id } }', { variables: { ids: ['rd_001', 'rd_002'] } });
      expect(result.data?.redemptions).toBeNull();
      expect(codes(result)).toEqual(['UNAUTHENTICATED']);
      expect(await apiCalls()).toEqual([]);
    });

    it('refuses more than 100 redemption ids before calling', async () => {
      const ids = Array.from({ length: 101 }, (_, index) => `rd_${index}`);
      const result = await t.gql('query ($ids: [ID!]!) { redemptions(ids: $ids) { id } }', { headers: member, variables: { ids } });
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'ids' });
      expect(await apiCalls()).toEqual([]);
    });
  });

  describe('webhooks', () => {
    it('creates with JSON and a bearer token, defaulting to both event types', async () => {
      const result = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/recognition" }) { id url eventTypes } }', { headers: admin });
      expect(result.errors).toBeUndefined();
      expect(result.data?.createWebhook).toMatchObject({ url: 'https://hooks.example/recognition', eventTypes: ['BONUS_CREATED', 'ACHIEVEMENT_EVENT_CREATED'] });
      const [call] = await emulator.requests();
      expect(call).toMatchObject({ method: 'POST', path: '/api/v1/webhooks' });
      expect(call!.headers).toEqual(expect.arrayContaining(['authorization', 'content-type']));
      expect(await apiCalls()).toEqual(['POST /api/v1/webhooks']);

      const listed = await t.gql('{ webhooks { id url eventTypes } }', { headers: member });
      expect(listed.data?.webhooks).toEqual([result.data?.createWebhook]);
    });

    it('updates, reading the fields it did not send from the list only when selected', async () => {
      const created = await t.gql<{ createWebhook: { id: string } }>('mutation { createWebhook(input: { url: "https://hooks.example/a", eventTypes: [BONUS_CREATED] }) { id } }', { headers: admin });
      const id = created.data!.createWebhook.id;
      await emulator.clearRequests();

      const updated = await t.gql(`mutation { updateWebhook(id: "${id}", input: { eventTypes: [ACHIEVEMENT_EVENT_CREATED] }) { id eventTypes } }`, { headers: admin });
      expect(updated.data?.updateWebhook).toEqual({ id, eventTypes: ['ACHIEVEMENT_EVENT_CREATED'] });
      expect(await apiCalls()).toEqual([`PUT /api/v1/webhooks/${id}`]);

      await emulator.clearRequests();
      const withUrl = await t.gql(`mutation { updateWebhook(id: "${id}", input: { eventTypes: [BONUS_CREATED] }) { id url eventTypes } }`, { headers: admin });
      expect(withUrl.data?.updateWebhook).toEqual({ id, url: 'https://hooks.example/a', eventTypes: ['BONUS_CREATED'] });
      expect(await apiCalls()).toEqual([`PUT /api/v1/webhooks/${id}`, 'GET /api/v1/webhooks']);
    });

    it('deletes, and reports an unknown webhook as NOT_FOUND', async () => {
      const created = await t.gql<{ createWebhook: { id: string } }>('mutation { createWebhook(input: { url: "https://hooks.example/b" }) { id } }', { headers: admin });
      const id = created.data!.createWebhook.id;
      expect((await t.gql(`mutation { deleteWebhook(id: "${id}") { id } }`, { headers: admin })).data).toEqual({ deleteWebhook: { id } });
      const again = await t.gql(`mutation { deleteWebhook(id: "${id}") { id } }`, { headers: admin });
      expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      const update = await t.gql(`mutation { updateWebhook(id: "${id}", input: { url: "https://x.example" }) { id } }`, { headers: admin });
      expect(codes(update)).toEqual(['NOT_FOUND']);
    });

    it('refuses an empty or non-http URL and unknown event types before calling', async () => {
      const cases: [string, Record<string, unknown> | undefined, string][] = [
        ['mutation { createWebhook(input: { url: "" }) { id } }', undefined, 'input.url'],
        ['mutation { createWebhook(input: { url: "ftp://files.example/x" }) { id } }', undefined, 'input.url'],
        ['mutation { updateWebhook(id: "wh_1", input: { url: "" }) { id } }', undefined, 'input.url'],
        ['mutation { createWebhook(input: { url: "https://x.example", eventTypes: [BONUS_CREATED, BONUS_DELETED] }) { id } }', undefined, 'input.eventTypes'],
        ['mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }', { input: { url: 'https://x.example', eventTypes: ['bonus.created'] } }, 'input'],
      ];
      for (const [query, variables, argument] of cases) {
        const result = await t.gql(query, { headers: admin, variables });
        expect(result.errors?.[0]?.extensions, query).toMatchObject({ code: 'BAD_USER_INPUT', argument });
      }
      expect(await apiCalls()).toEqual([]);
    });
  });

  describe('diagnostics', () => {
    it('turns the teapot’s 418 into TEAPOT', async () => {
      const result = await t.gql('{ teapot }', { headers: member });
      expect(result).toMatchObject({ data: { teapot: null }, errors: [{ message: "recognition: I'm a teapot", extensions: { code: 'TEAPOT', status: 418 } }] });
    });
  });
});

describe('the real service’s dialect', () => {
  beforeEach(async () => {
    await emulator.dialect('real');
  });

  it('is what the emulator speaks after the switch: answers wrapped in {success, result}, catalogue groups with a bare array', async () => {
    const response = await fetch(`${emulator.url}/api/v1/rewards?access_token=${DEMO_TOKENS.member}`);
    const body = (await response.json()) as { success: boolean; result: { rewards: unknown }[] };
    expect(body.success).toBe(true);
    expect(Array.isArray(body.result[0]!.rewards)).toBe(true);
    await emulator.reset();
    const spec = (await (await fetch(`${emulator.url}/api/v1/rewards?access_token=${DEMO_TOKENS.member}`)).json()) as unknown[];
    expect(Array.isArray(spec)).toBe(true);
  });

  it('reads what a new user saw fail: the catalogue, a reward’s name, trends, a redemption and a new webhook’s id', async () => {
    const result = await t.gql<{ rewardCatalog: { rewards: { name: string }[] }[]; reward: { name: string }; hashtagTrends: unknown[]; redemption: { id: string; state: string } }>(
      '{ rewardCatalog { name rewards { name } } reward(id: "rw_coffee_5") { name } hashtagTrends { hashtag count } redemption(id: "rd_001") { id state } }',
      { headers: member },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.rewardCatalog.length).toBeGreaterThan(0);
    expect(result.data!.rewardCatalog[0]!.rewards[0]!.name).toEqual(expect.any(String));
    expect(result.data!.reward.name).toEqual(expect.any(String));
    expect(result.data!.hashtagTrends.length).toBeGreaterThan(0);
    expect(result.data!.redemption).toEqual({ id: 'rd_001', state: expect.any(String) });
    const created = await t.gql<{ createWebhook: { id: string } }>('mutation { createWebhook(input: { url: "https://hooks.example/real" }) { id } }', { headers: admin });
    expect(created.errors).toBeUndefined();
    expect(created.data!.createWebhook.id).toMatch(/\w/);
  });
});

describe('answers of the wrong shape', () => {
  const upstreamError = (result: { errors?: { message: string; extensions?: Record<string, unknown> }[] }) => result.errors?.[0];

  it('is UPSTREAM_ERROR naming the missing id, never a redemption with id "undefined"', async () => {
    await emulator.fault({ path: '/api/v1/redemptions/rd_001', status: 200, body: { success: true, result: { state: 'fulfilled' } } });
    const result = await t.gql('{ redemption(id: "rd_001") { id state } }', { headers: member });
    expect(result.data?.redemption).toBeNull();
    expect(upstreamError(result)).toMatchObject({ message: expect.stringMatching(/^recognition: getRedemption .*wrong shape.*\bid\b/), extensions: { code: 'UPSTREAM_ERROR', service: 'recognition', status: 200 } });
  });

  it('is UPSTREAM_ERROR when a list is expected and an object arrives, never an empty list', async () => {
    await emulator.fault({ path: '/api/v1/analytics/trends', status: 200, body: { success: true, result: { hashtag: '#a', count: '1' } } });
    const result = await t.gql('{ hashtagTrends { hashtag } }', { headers: member });
    expect(result.data?.hashtagTrends).toBeNull();
    expect(upstreamError(result)?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'recognition' });
  });

  it('names the path of a missing part deep in the catalogue', async () => {
    await emulator.fault({ path: '/api/v1/rewards', status: 200, body: { success: true, result: [{ type: 'gift_card', name: 'Gift cards', rewards: [{ name: 'Books' }] }] } });
    const result = await t.gql('{ rewardCatalog { name } }', { headers: member });
    expect(upstreamError(result)).toMatchObject({ message: expect.stringContaining('[0].rewards[0].denominations'), extensions: { code: 'UPSTREAM_ERROR' } });
  });

  it('is UPSTREAM_ERROR when a new webhook’s answer carries no id, and when a 2xx says success: false', async () => {
    await emulator.fault({ path: '/api/v1/webhooks', method: 'POST', status: 200, body: { success: true, result: {} }, times: 1 });
    const noId = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/x" }) { id } }', { headers: admin });
    expect(upstreamError(noId)).toMatchObject({ message: expect.stringContaining('id'), extensions: { code: 'UPSTREAM_ERROR', service: 'recognition' } });
    await emulator.fault({ path: '/api/v1/webhooks', method: 'POST', status: 200, body: { success: false, message: 'Url is invalid' }, times: 1 });
    const refused = await t.gql('mutation { createWebhook(input: { url: "https://hooks.example/x" }) { id } }', { headers: admin });
    expect(upstreamError(refused)).toMatchObject({ message: 'recognition: createWebhook failed: Url is invalid', extensions: { code: 'UPSTREAM_ERROR' } });
  });
});
