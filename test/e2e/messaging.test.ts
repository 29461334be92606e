import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT_ID, DEMO_API_KEY, DEMO_LOGIN, OTHER_ACCOUNT_ID, OTHER_STORE_ID, SECOND_STORE_ID, SEEDED_NUMBERS } from '../../emulators/messaging/data.ts';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { capturedLogs } from '../support/logs.ts';
import { DEMO_STORE_ID, member, messagingOf } from '../support/messagingPieces.ts';
import { startTestStack } from '../support/stack.ts';

const t = await startTestStack();
const m = messagingOf(t);

beforeEach(async () => {
  await m.emulator.reset();
});

const codes = (result: { errors?: { extensions?: Record<string, unknown> }[] }) => result.errors?.map((error) => error.extensions?.code);
const upstreamPaths = async () => (await m.emulator.requests()).map((request) => `${request.method} ${request.path}`);

describe('messaging: stores and accounts', () => {
  it('reads a store with its keywords, templates and callback addresses, our secret masked', async () => {
    const result = await m.gql<{ store: Record<string, unknown> }>(
      `query($id: ID!) { store(id: $id) { id name timeZone createdAt inboundCallbackUrl messageStatusUrl complianceNumber
        templates { confirmation alreadyOptedIn } keywords { id keyword type shortCode createdAt responderContent mediaUrl } automation { confirmation } } }`,
      { id: DEMO_STORE_ID },
    );
    expect(result.errors).toBeUndefined();
    const store = result.data!.store;
    expect(store).toMatchObject({
      id: DEMO_STORE_ID,
      name: 'Corner Bakery',
      timeZone: 'America/New_York',
      inboundCallbackUrl: `${m.subgraphOrigin}/callbacks/messaging/inbound/[REDACTED]`,
      messageStatusUrl: `${m.subgraphOrigin}/callbacks/messaging/status/[REDACTED]`,
      complianceNumber: '15551230000',
      templates: { confirmation: expect.stringContaining('You opted in to Corner Bakery'), alreadyOptedIn: expect.any(String) },
      // The store view carries no settings: only the account view does.
      automation: null,
    });
    expect(store.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    expect(store.keywords).toEqual(
      expect.arrayContaining([
        { id: '5a1f0c9e8b3d4e0012a7e001', keyword: 'BREAD', type: 'OPT_IN', shortCode: '33733', createdAt: store.createdAt, responderContent: null, mediaUrl: null },
        { id: '5a1f0c9e8b3d4e0012a7e003', keyword: 'HOURS', type: 'RESPONDER', shortCode: '33733', createdAt: store.createdAt, responderContent: 'Open 7am-7pm every day.', mediaUrl: null },
      ]),
    );
    const requests = await m.emulator.requests();
    expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([`GET /account/store/detail/${DEMO_STORE_ID}`]);
    expect(requests[0]!.headers).toContain('authorization');
  });

  it('answers null for a store the account does not hold, with no error', async () => {
    const result = await m.gql('{ unknown: store(id: "5a1f0c9e8b3d4e0012a7dfff") { id } elsewhere: store(id: "' + OTHER_STORE_ID + '") { id } }');
    expect(result).toEqual({ data: { unknown: null, elsewhere: null } });
  });

  it('reads the account with its stores (and their automation settings) and users, never its API key or salt', async () => {
    const result = await m.gql<{ account: Record<string, unknown> }>(
      `query($id: ID!) { account(id: $id) { id name createdAt legacy suspended stores { id name automation { confirmation alreadyOptedIn } complianceEmail } users { id firstName lastName email phone createdAt } } }`,
      { id: DEMO_ACCOUNT_ID },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.account).toMatchObject({
      id: DEMO_ACCOUNT_ID,
      name: 'Corner Bakery Group',
      legacy: false,
      suspended: false,
      stores: [
        { id: DEMO_STORE_ID, name: 'Corner Bakery', automation: { confirmation: true, alreadyOptedIn: true }, complianceEmail: 'compliance@corner-bakery.example' },
        { id: SECOND_STORE_ID, name: 'Corner Bakery Catering', automation: { confirmation: true, alreadyOptedIn: true }, complianceEmail: expect.any(String) },
      ],
      users: [expect.objectContaining({ id: '5a1f0c9e8b3d4e0012a7b001', firstName: 'Dana', email: DEMO_LOGIN.email }), expect.objectContaining({ firstName: 'Sam' })],
    });
    expect(JSON.stringify(result)).not.toContain(DEMO_API_KEY);
    const asked = await m.gql('query($id: ID!) { account(id: $id) { apiKey } }', { id: DEMO_ACCOUNT_ID });
    expect(codes(asked)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it('answers null for an account id the service refuses with an empty 400 (another account, or none)', async () => {
    const result = await m.gql('query($a: ID!, $b: ID!) { other: account(id: $a) { id } none: account(id: $b) { id } }', { a: OTHER_ACCOUNT_ID, b: 'nope' });
    expect(result).toEqual({ data: { other: null, none: null } });
  });

  it('switches an automated template off and on', async () => {
    const off = await m.gql('mutation($s: ID!) { setAutomation(storeId: $s, automation: ALREADY_OPTED_IN, enabled: false) { storeId automation enabled } }', { s: DEMO_STORE_ID });
    expect(off).toEqual({ data: { setAutomation: { storeId: DEMO_STORE_ID, automation: 'ALREADY_OPTED_IN', enabled: false } } });
    const account = await m.gql<{ account: { stores: { automation: unknown }[] } }>('query($id: ID!) { account(id: $id) { stores { automation { confirmation alreadyOptedIn } } } }', { id: DEMO_ACCOUNT_ID });
    expect(account.data!.account.stores[0]!.automation).toEqual({ confirmation: true, alreadyOptedIn: false });
    // The reminder is not sent while it is off.
    await m.text(SEEDED_NUMBERS.optedIn, 'BREAD');
    expect((await m.messages()).filter((message) => message.kind === 'already')).toEqual([]);
    const requests = await m.emulator.requests();
    expect(requests.find((request) => request.path === '/account/store/updateautomation')!.headers).toContain('content-type');
  });

  it('refuses an automation change on a store of another account with the service message', async () => {
    const result = await m.gql('mutation($s: ID!) { setAutomation(storeId: $s, automation: CONFIRMATION, enabled: false) { enabled } }', { s: OTHER_STORE_ID });
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(result.errors![0]!.message).toContain('Invalid store id');
  });
});

describe('messaging: subscribers', () => {
  it("reads a subscriber's status in one store, sending digits only", async () => {
    const result = await m.gql('query($s: ID!) { subscriber(storeId: $s, mobileId: "+1 555 000 0001") { id storeId mobileId status createdAt channel keyword keywordType shortCode storeName accountId optInAttempts store { name } } }', {
      s: DEMO_STORE_ID,
    });
    expect(result.errors).toBeUndefined();
    expect(result.data!.subscriber).toEqual({
      id: '5a1f0c9e8b3d4e0012a7f001',
      storeId: DEMO_STORE_ID,
      mobileId: SEEDED_NUMBERS.optedIn,
      status: 'OPTED_IN',
      createdAt: expect.stringMatching(/Z$/),
      channel: 'sms',
      keyword: 'BREAD',
      keywordType: 'OPT_IN',
      shortCode: '33733',
      storeName: 'Corner Bakery',
      accountId: DEMO_ACCOUNT_ID,
      optInAttempts: 1,
      store: { name: 'Corner Bakery' },
    });
    expect(await upstreamPaths()).toContain(`GET /subscriber/statusbystore/${DEMO_STORE_ID}/${SEEDED_NUMBERS.optedIn}`);
  });

  it('answers null for a number the store does not know (the service says so with an empty 400)', async () => {
    const result = await m.gql('query($s: ID!) { subscriber(storeId: $s, mobileId: "15559999999") { status } mobileNumber(mobileId: "15559999999") { mobileId } }', { s: DEMO_STORE_ID });
    expect(result).toEqual({ data: { subscriber: null, mobileNumber: null } });
  });

  it("reads a number's status across all the account's stores", async () => {
    const result = await m.gql<{ mobileNumber: { optIns: unknown[] } }>('{ mobileNumber(mobileId: "+15550000001") { mobileId id createdAt optIns { storeId storeName status keyword shortCode } } }');
    expect(result.data!.mobileNumber).toEqual({
      mobileId: SEEDED_NUMBERS.optedIn,
      id: '5a1f0c9e8b3d4e0012a7f001',
      createdAt: expect.stringMatching(/Z$/),
      optIns: [
        { storeId: DEMO_STORE_ID, storeName: 'Corner Bakery', status: 'OPTED_IN', keyword: 'BREAD', shortCode: '33733' },
        { storeId: SECOND_STORE_ID, storeName: 'Corner Bakery Catering', status: 'OPTED_IN', keyword: 'CATER', shortCode: '44844' },
      ],
    });
  });

  it("pages a store's subscribers over the service's pages of 100, one call per aligned page", async () => {
    const query = 'query($s: ID!, $first: Int, $after: String) { store(id: $s) { subscribers(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { mobileId status } } } } }';
    type Page = { store: { subscribers: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { mobileId: string } }[] } } };
    const first = await m.gql<Page>(query, { s: DEMO_STORE_ID });
    const page1 = first.data!.store.subscribers;
    expect(page1.totalCount).toBe(210);
    expect(page1.edges).toHaveLength(100);
    expect(page1.edges[0]!.node).toEqual({ mobileId: SEEDED_NUMBERS.optedIn, status: 'OPTED_IN' });
    expect(page1.pageInfo.hasNextPage).toBe(true);
    await m.emulator.clearRequests();
    const third = await m.gql<Page>(query, { s: DEMO_STORE_ID, after: (await m.gql<Page>(query, { s: DEMO_STORE_ID, after: page1.pageInfo.endCursor })).data!.store.subscribers.pageInfo.endCursor });
    expect(third.data!.store.subscribers.edges).toHaveLength(10);
    expect(third.data!.store.subscribers.pageInfo.hasNextPage).toBe(false);
    expect((await upstreamPaths()).filter((path) => path.startsWith('GET /subscriber/bystore'))).toEqual([`GET /subscriber/bystore/${DEMO_STORE_ID}/2`, `GET /subscriber/bystore/${DEMO_STORE_ID}/3`]);
  });

  it('reads the two pages an unaligned window spans', async () => {
    const query = 'query($s: ID!, $first: Int, $after: String) { store(id: $s) { subscribers(first: $first, after: $after) { edges { cursor node { mobileId } } } } }';
    type Page = { store: { subscribers: { edges: { cursor: string; node: { mobileId: string } }[] } } };
    const start = await m.gql<Page>(query, { s: DEMO_STORE_ID, first: 90 });
    await m.emulator.clearRequests();
    const spanning = await m.gql<Page>(query, { s: DEMO_STORE_ID, first: 20, after: start.data!.store.subscribers.edges[89]!.cursor });
    expect(spanning.data!.store.subscribers.edges.map((edge) => edge.node.mobileId)).toEqual(Array.from({ length: 20 }, (_, index) => `1555100${String(86 + index).padStart(4, '0')}`));
    expect((await upstreamPaths()).filter((path) => path.startsWith('GET /subscriber/bystore'))).toEqual([`GET /subscriber/bystore/${DEMO_STORE_ID}/1`, `GET /subscriber/bystore/${DEMO_STORE_ID}/2`]);
  });

  it('refuses a page size above the service page before any call', async () => {
    await m.emulator.clearRequests();
    const result = await m.gql('query($s: ID!) { store(id: $s) { subscribers(first: 101) { totalCount } } }', { s: DEMO_STORE_ID });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'first' });
    expect(await upstreamPaths()).toEqual([`GET /account/store/detail/${DEMO_STORE_ID}`]);
  });

  it('sends an opt-in and returns the message id; a number the service refuses with an empty 400 is BAD_USER_INPUT naming it', async () => {
    const sent = await m.gql('mutation($s: ID!) { sendOptIn(input: { storeId: $s, mobileId: "+44 7700 900123", type: DOUBLE }) { messageId storeId mobileId type } }', { s: DEMO_STORE_ID });
    expect(sent).toEqual({ data: { sendOptIn: { messageId: expect.stringMatching(/^[0-9a-f]{24}$/), storeId: DEMO_STORE_ID, mobileId: '447700900123', type: 'DOUBLE' } } });
    await m.emulator.fault({ path: '/subscriber/sendoptin', status: 400, times: 1 });
    const refused = await m.gql('mutation($s: ID!) { sendOptIn(input: { storeId: $s, mobileId: "15550001234", type: SINGLE }) { messageId } }', { s: DEMO_STORE_ID });
    expect(refused.data).toEqual({ sendOptIn: null });
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.mobileId', service: 'messaging', status: 400 });
  });

  it('opts a number out, and NOT_FOUND for a number the store does not know', async () => {
    const out = await m.gql('mutation($s: ID!) { sendOptOut(storeId: $s, mobileId: "15550000001") { messageId message storeId mobileId } }', { s: DEMO_STORE_ID });
    expect(out).toEqual({ data: { sendOptOut: { messageId: expect.any(String), message: 'Subscriber opted out', storeId: DEMO_STORE_ID, mobileId: SEEDED_NUMBERS.optedIn } } });
    const unknown = await m.gql('mutation($s: ID!) { sendOptOut(storeId: $s, mobileId: "15559999999") { messageId } }', { s: DEMO_STORE_ID });
    expect(unknown.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND', argument: 'mobileId', status: 400 });
  });

  it.each([
    ['letters', '555-CALL-NOW', 'must be digits'],
    ['too short', '+1 555', 'must be 8 to 15 digits'],
    ['too long', '1234567890123456', 'must be 8 to 15 digits'],
  ])('refuses a mobile number with %s before any call', async (_name, mobileId, message) => {
    await m.emulator.clearRequests();
    const result = await m.gql('mutation($s: ID!, $n: String!) { sendOptIn(input: { storeId: $s, mobileId: $n, type: SINGLE }) { messageId } }', { s: DEMO_STORE_ID, n: mobileId });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.mobileId' });
    expect(result.errors![0]!.message).toContain(message);
    expect(await m.emulator.requests()).toEqual([]);
  });
});

describe('messaging: keywords', () => {
  it('deletes a keyword: gone from the store, a later text of it is unrecognized, a second delete is NOT_FOUND', async () => {
    const deleted = await m.gql('mutation($s: ID!) { deleteKeyword(storeId: $s, keywordId: "5a1f0c9e8b3d4e0012a7e002") { storeId keywordId } }', { s: DEMO_STORE_ID });
    expect(deleted).toEqual({ data: { deleteKeyword: { storeId: DEMO_STORE_ID, keywordId: '5a1f0c9e8b3d4e0012a7e002' } } });
    const store = await m.gql<{ store: { keywords: { keyword: string }[] } }>('query($s: ID!) { store(id: $s) { keywords { keyword } } }', { s: DEMO_STORE_ID });
    expect(store.data!.store.keywords.map((keyword) => keyword.keyword)).not.toContain('CROISSANT');
    expect((await m.text('15557770001', 'croissant')).handled).toBe('unrecognized');
    const again = await m.gql('mutation($s: ID!) { deleteKeyword(storeId: $s, keywordId: "5a1f0c9e8b3d4e0012a7e002") { keywordId } }', { s: DEMO_STORE_ID });
    expect(again.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND', argument: 'keywordId', status: 400 });
  });

  it("sets a responder keyword's content, which the next text of it gets", async () => {
    const set = await m.gql('mutation($s: ID!) { setResponderContent(input: { storeId: $s, keywordId: "5a1f0c9e8b3d4e0012a7e003", content: "Open 6am-8pm", mediaUrl: "https://x.example/h.png" }) { storeId keywordId content mediaUrl } }', {
      s: DEMO_STORE_ID,
    });
    expect(set).toEqual({ data: { setResponderContent: { storeId: DEMO_STORE_ID, keywordId: '5a1f0c9e8b3d4e0012a7e003', content: 'Open 6am-8pm', mediaUrl: 'https://x.example/h.png' } } });
    await m.text('15557770002', 'hours');
    expect((await m.messages()).filter((message) => message.kind === 'responder').map((message) => message.body)).toEqual(['Open 6am-8pm https://x.example/h.png']);
    const request = (await m.emulator.requests()).find((entry) => entry.path === '/keyword/editresponderkeywordcontent/')!;
    expect(request.method).toBe('POST');
    expect(request.query).toEqual({});
  });

  it('NOT_FOUND for a responder keyword the store does not have', async () => {
    const result = await m.gql('mutation($s: ID!) { setResponderContent(input: { storeId: $s, keywordId: "5a1f0c9e8b3d4e0012a7efff", content: "hi" }) { keywordId } }', { s: DEMO_STORE_ID });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND', argument: 'input.keywordId' });
  });

  it.each([
    ['neither content nor a media URL', { content: null }, 'input.content'],
    ['content over 1,600 characters', { content: 'x'.repeat(1601) }, 'input.content'],
    ['a media URL that is not http(s)', { mediaUrl: 'ftp://x.example/a.png' }, 'input.mediaUrl'],
  ])('refuses %s before any call', async (_name, fields, argument) => {
    await m.emulator.clearRequests();
    const result = await m.gql('mutation($input: SetResponderContentInput!) { setResponderContent(input: $input) { keywordId } }', {
      input: { storeId: DEMO_STORE_ID, keywordId: '5a1f0c9e8b3d4e0012a7e003', ...fields },
    });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    expect(await m.emulator.requests()).toEqual([]);
  });

  it('accepts content of exactly 1,600 characters', async () => {
    const result = await m.gql('mutation($input: SetResponderContentInput!) { setResponderContent(input: $input) { keywordId } }', {
      input: { storeId: DEMO_STORE_ID, keywordId: '5a1f0c9e8b3d4e0012a7e003', content: 'x'.repeat(1600) },
    });
    expect(result.errors).toBeUndefined();
  });
});

describe('messaging: login, credentials and failures', () => {
  it('logs in without a token and returns the account id and API key, which no log holds', async () => {
    const result = await m.gql('mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { accountId apiKey } }', { e: DEMO_LOGIN.email, p: DEMO_LOGIN.password }, {});
    expect(result).toEqual({ data: { logIn: { accountId: DEMO_ACCOUNT_ID, apiKey: DEMO_API_KEY } } });
    const text = capturedLogs.join('');
    expect(text).not.toContain(DEMO_API_KEY);
    expect(text).not.toContain(DEMO_LOGIN.password);
  });

  it('refuses a blank email, a blank password or a malformed number in a lookup before any call', async () => {
    await m.emulator.clearRequests();
    const blank = await m.gql('mutation { a: logIn(email: " ", password: "x") { accountId } b: logIn(email: "a@b.example", password: "") { accountId } }', {}, {});
    expect(blank.errors!.map((error) => error.extensions?.argument)).toEqual(['email', 'password']);
    const lookup = await m.gql('query($s: ID!) { subscriber(storeId: $s, mobileId: "call me") { status } mobileNumber(mobileId: "123") { mobileId } }', { s: DEMO_STORE_ID });
    expect(lookup.errors!.map((error) => [error.extensions?.code, error.extensions?.argument])).toEqual([
      ['BAD_USER_INPUT', 'mobileId'],
      ['BAD_USER_INPUT', 'mobileId'],
    ]);
    expect(await m.emulator.requests()).toEqual([]);
  });

  it('refuses an id that is a dot segment before any call, naming the GraphQL argument', async () => {
    await m.emulator.clearRequests();
    const result = await m.gql('{ store(id: "..") { id } account(id: ".") { id } subscriber(storeId: "..", mobileId: "15550000001") { status } }');
    expect(result.errors!.map((error) => [error.extensions?.code, error.extensions?.argument])).toEqual([
      ['BAD_USER_INPUT', 'id'],
      ['BAD_USER_INPUT', 'id'],
      ['BAD_USER_INPUT', 'storeId'],
    ]);
    const deleted = await m.gql('mutation { deleteKeyword(storeId: "x", keywordId: "..") { keywordId } }');
    expect(deleted.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'keywordId' });
    expect(await m.emulator.requests()).toEqual([]);
  });

  it('an envelope whose status is neither pass nor fail is UPSTREAM_ERROR, never a lookup’s null', async () => {
    await m.emulator.fault({ path: '/account/store/detail/*', status: 200, body: { status: 'success', code: 200, message: 'ok', results: {} }, times: 1 });
    const result = await m.gql('query($s: ID!) { store(id: $s) { id } }', { s: DEMO_STORE_ID }, member);
    expect(result.data).toEqual({ store: null });
    expect(result.errors?.[0]).toMatchObject({ message: 'messaging: getStore answered an envelope whose status is neither pass nor fail', extensions: { code: 'UPSTREAM_ERROR', status: 200 } });
  });

  it('a wrong password is UNAUTHENTICATED, `status` the HTTP status whether the fail body came with 400 or 200', async () => {
    const result = await m.gql('mutation($e: String!) { logIn(email: $e, password: "wrong password") { accountId } }', { e: DEMO_LOGIN.email }, {});
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'messaging', status: 400 });
    await m.emulator.control('variants', { failureStatus: 200 });
    const live = await m.gql('mutation($e: String!) { logIn(email: $e, password: "wrong password") { accountId } }', { e: DEMO_LOGIN.email }, {});
    expect(live.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', service: 'messaging', status: 200 });
  });

  it('without a credential: UNAUTHENTICATED and no call; with a refused one: UNAUTHENTICATED', async () => {
    await m.emulator.clearRequests();
    const none = await m.gql('query($s: ID!) { store(id: $s) { id } }', { s: DEMO_STORE_ID }, {});
    expect(codes(none)).toEqual(['UNAUTHENTICATED']);
    expect(await m.emulator.requests()).toEqual([]);
    const refused = await m.gql('query($s: ID!) { store(id: $s) { id } }', { s: DEMO_STORE_ID }, { 'x-messaging-token': 'not.a.token' });
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
  });

  it("the messaging credential reaches only the messaging service, and others' never reach it", async () => {
    await m.gql('query($s: ID!) { store(id: $s) { id } }', { s: DEMO_STORE_ID }, { ...member, 'x-recognition-token': DEMO_TOKENS.member });
    const [request] = await m.emulator.requests();
    expect(request!.headers).toContain('authorization');
    expect(request!.headers).not.toContain('x-recognition-token');
    expect(request!.headers).not.toContain('x-messaging-token');
  });

  it('reads a {status: "fail"} body sent with HTTP 200 as the failure it is', async () => {
    await m.emulator.control('variants', { failureStatus: 200 });
    await m.emulator.clearRequests();
    const result = await m.gql('mutation($s: ID!) { sendOptIn(input: { storeId: $s, mobileId: "15550001111", type: SINGLE }) { messageId } }', { s: OTHER_STORE_ID });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', service: 'messaging' });
    expect(result.errors![0]!.message).toContain('Invalid store id');
    // The service did answer 200: the test exercises the variant, not the spec's 400.
    expect((await m.emulator.requests()).map((request) => [request.path, request.status])).toEqual([['/subscriber/sendoptin', 200]]);
  });

  it('a 2xx answer of the wrong shape is UPSTREAM_ERROR, not a wrong result', async () => {
    await m.emulator.fault({ path: `/account/store/detail/${DEMO_STORE_ID}`, status: 200, body: { status: 'pass', code: 200, message: 'ok', results: { storeName: 'No id here', keyword: 'not a list' } }, times: 1 });
    const result = await m.gql('query($s: ID!) { store(id: $s) { name } }', { s: DEMO_STORE_ID });
    expect(result.data).toEqual({ store: null });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'messaging', status: 200 });
  });

  it('a 5xx is UPSTREAM_ERROR and a dropped connection UPSTREAM_UNAVAILABLE', async () => {
    await m.emulator.fault({ path: '/subscriber/sendoptout', status: 503, times: 1 });
    const failed = await m.gql('mutation($s: ID!) { sendOptOut(storeId: $s, mobileId: "15550000001") { messageId } }', { s: DEMO_STORE_ID });
    expect(codes(failed)).toEqual(['UPSTREAM_ERROR']);
    await m.emulator.fault({ path: '/subscriber/sendoptout', drop: true, times: 1 });
    const dropped = await m.gql('mutation($s: ID!) { sendOptOut(storeId: $s, mobileId: "15550000001") { messageId } }', { s: DEMO_STORE_ID });
    expect(codes(dropped)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });
});
