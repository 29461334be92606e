import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startTestStack } from '../support/stack.ts';
import { subscribeWs, type Collected } from '../support/subscribers.ts';

// Arguments that name nothing are refused before any call: sent, a blank value reads upstream as
// an absent one, and the answer silently widens to everyone or everything.

const t = await startTestStack();
const emulator = t.emulator('recognition');
const admin = { 'x-recognition-token': DEMO_TOKENS.admin };
const open: Collected[] = [];

beforeEach(async () => {
  await emulator.reset();
});
afterEach(() => {
  for (const subscription of open.splice(0)) subscription.close();
});

const refusals: [operation: string, argument: string][] = [
  ['{ leaderboard(team: { managerId: "" }) { count } }', 'team.managerId'],
  ['{ leaderboard(team: { managerId: "  " }) { count } }', 'team.managerId'],
  ['{ leaderboard(team: { customProperties: [{ name: "", value: "Sales" }] }) { count } }', 'team.customProperties.name'],
  ['{ leaderboard(hashtag: "") { count } }', 'hashtag'],
  ['{ leaderboard(hashtag: "#") { count } }', 'hashtag'],
  ['{ standouts(value: "") { count } }', 'value'],
  ['{ standouts(role: "") { count } }', 'role'],
  ['{ standouts(period: " ") { count } }', 'period'],
  ['{ standouts(customPropertyName: "", customPropertyValue: "Lisbon") { count } }', 'customPropertyName'],
  ['{ apiKeys(userId: "") { id } }', 'userId'],
  ['mutation { createApiKey(input: { label: "for nobody", userId: "" }) { token } }', 'input.userId'],
  ['{ rewardCatalog(catalogCountry: "") { name } }', 'catalogCountry'],
  ['{ rewardCatalog(requestCountry: "") { name } }', 'requestCountry'],
  ['{ rewardCatalog(personalizeFor: "") { name } }', 'personalizeFor'],
  ['{ reward(id: "rw_coffee_5", requestCountry: "") { id } }', 'requestCountry'],
  ['mutation { createWebhook(input: { url: "https://hooks.example/x", eventTypes: [] }) { id } }', 'input.eventTypes'],
  ['mutation { updateWebhook(id: "wh_1", input: { eventTypes: [] }) { id } }', 'input.eventTypes'],
  ['{ redemptions(ids: ["rd_001", ".."]) { id } }', 'ids'],
  ['{ redemptions(ids: ["rd_001", ""]) { id } }', 'ids'],
];

describe('arguments that name nothing', () => {
  it.each(refusals)('%s is BAD_USER_INPUT naming %s, before any call', async (operation, argument) => {
    const result = await t.gql(operation, { headers: admin });
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    expect(await emulator.requests()).toEqual([]);
  });

  it('still takes a blank value to match, and the names that do name something', async () => {
    const result = await t.gql(
      `{ team: leaderboard(team: { managerId: "usr_001" }, hashtag: "#teamwork") { count }
         blankValue: leaderboard(team: { customProperties: [{ name: "department", value: "" }] }) { count } }`,
      { headers: admin },
    );
    expect(result.errors).toBeUndefined();
    const scopes = (await emulator.requests()).map((request) => request.query.scope);
    expect(scopes).toEqual(['usr_001', '{"department":""}']);
  });

  it.each([
    ['subscription { bonusCreated(filter: { hashtag: "" }) { id } }', 'filter.hashtag'],
    ['subscription { bonusCreated(filter: { giverId: "" }) { id } }', 'filter.giverId'],
    ['subscription { bonusCreated(filter: { receiverId: " " }) { id } }', 'filter.receiverId'],
    ['subscription { achievementEarned(filter: { receiverId: "" }) { id } }', 'filter.receiverId'],
  ])('%s is BAD_USER_INPUT naming %s, instead of following every event', async (operation, argument) => {
    const subscription = subscribeWs(t.graphqlUrl, operation, { connectionParams: admin });
    open.push(subscription);
    const [result] = await subscription.waitFor(1);
    expect(result!.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    // Refused before the credential check, the subscription's only call.
    expect(await emulator.requests()).toEqual([]);
  });
});
