import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../../emulators/recognition/data.ts';
import { DEMO_CREDENTIALS } from '../../../emulators/marketplace/data.ts';
import { DEMO_TOKEN as DASHBOARDS_TOKEN } from '../../../emulators/dashboards/data.ts';
import { DEMO_STORE_ID, DEMO_TOKEN as MESSAGING_TOKEN, OTHER_STORE_ID, OTHER_TOKEN as OTHER_MESSAGING_TOKEN } from '../../../emulators/messaging/data.ts';
import { DEMO_ADMIN_TOKEN } from '../../../emulators/gatewayAdmin/data.ts';
import { DEMO_APIKEY, OTHER_APIKEY } from '../../../emulators/imports/data.ts';
import { startTestStack, type GraphQLResult } from '../../support/stack.ts';
import { SELLER_HEADERS } from '../../support/marketplaceSeller.ts';

/**
 * QA pass 11, finding 1: an upstream answer well under `<SERVICE>_MAX_RESPONSE_BYTES` whose list
 * holds a million `{}` (about 3 MB) or a million `null` held a subgraph's event loop for up to 30 s
 * and took gigabytes, zod wording an issue for every item. The graph, emulators and test share one
 * process here, so a subgraph held up holds up everything: the other caller's answer, and the test.
 * Each service's answer is one `UPSTREAM_ERROR` naming the list, while a query of another
 * credential on the same subgraph, sent at the same moment, is answered.
 */
const t = await startTestStack();

/** A list of a million of `item`, as the raw JSON text of a body. */
const million = (item: string) => `[${new Array<string>(1_000_000).fill(item).join(',')}]`;
const LISTS = { '{}': million('{}'), null: million('null') };

/** Well under the suites' 20 s timeout, as a check, not a measure: before the fix one such answer took from 2 to 40 s here. */
const LOOSE_BOUND_MS = 5_000;

interface Case {
  service: string;
  /** The upstream call whose answer holds the list, and that answer around it. */
  path: string;
  answer: (list: string) => string;
  /** The query that reads it, and its root field. */
  hostile: { query: string; headers: Record<string, string>; field: string };
  /** Another credential's query on the same subgraph, and what it answers. */
  other: { query: string; headers: Record<string, string>; data: unknown };
  /** Where the message says the list is. */
  names: string;
}

const recognition = { 'x-recognition-token': DEMO_TOKENS.admin };
const marketplace = SELLER_HEADERS;

const CASES: Case[] = [
  {
    service: 'recognition',
    path: '/api/v1/rewards',
    answer: (list) => `{"success":true,"result":${list}}`,
    hostile: { query: '{ rewardCatalog { name } }', headers: recognition, field: 'rewardCatalog' },
    other: { query: '{ redemption(id: "rd_001") { id } }', headers: { 'x-recognition-token': DEMO_TOKENS.member }, data: { redemption: { id: 'rd_001' } } },
    names: 'listRewards answered a body of the wrong shape (the body: Too big: expected array to have <=10000 items)',
  },
  {
    service: 'marketplace',
    path: '/products',
    answer: (list) => `{"products":${list},"total":1000000,"next":null}`,
    hostile: { query: '{ products(status: "enabled", first: 2) { totalCount } }', headers: marketplace, field: 'products' },
    // The same account, signed in with its user token: another credential.
    other: {
      query: '{ labelGroups { id } }',
      headers: { 'x-marketplace-user-token': DEMO_CREDENTIALS.userToken, 'x-marketplace-account-key': DEMO_CREDENTIALS.accountKey },
      data: { labelGroups: expect.any(Array) },
    },
    names: 'products: Too big: expected array to have <=100 items',
  },
  {
    service: 'messaging',
    path: `/account/store/detail/${DEMO_STORE_ID}`,
    answer: (list) => `{"status":"pass","code":200,"results":{"_id":"${DEMO_STORE_ID}","storeName":"Corner Bakery","keyword":${list}}}`,
    hostile: { query: `{ store(id: "${DEMO_STORE_ID}") { name } }`, headers: { 'x-messaging-token': MESSAGING_TOKEN }, field: 'store' },
    other: { query: `{ store(id: "${OTHER_STORE_ID}") { id } }`, headers: { 'x-messaging-token': OTHER_MESSAGING_TOKEN }, data: { store: { id: OTHER_STORE_ID } } },
    names: 'does not have the documented shape at results.keyword (Too big: expected array to have <=10000 items)',
  },
  {
    service: 'dashboards',
    path: '/dashboards',
    answer: (list) => `{"results":${list},"totalCount":1000000,"currentPage":0}`,
    hostile: { query: '{ dashboards { totalCount } }', headers: { 'x-dashboards-token': DASHBOARDS_TOKEN }, field: 'dashboards' },
    // The service knows one token: the other caller is another query of it.
    other: { query: '{ dashboard(slug: "api-health") { id } }', headers: { 'x-dashboards-token': DASHBOARDS_TOKEN }, data: { dashboard: { id: 'dsh_0001' } } },
    names: 'results: Too big: expected array to have <=100 items',
  },
  {
    service: 'gatewayAdmin',
    path: '/apis/billing/plugins/',
    answer: (list) => `{"data":${list},"total":1000000}`,
    hostile: { query: '{ explorerSettings(api: "billing", consumer: "partner-portal") { grants } }', headers: { 'x-gateway-admin-token': DEMO_ADMIN_TOKEN }, field: 'explorerSettings' },
    // One administrator token: the other caller is another query of it, an API the gateway does not have.
    other: { query: '{ explorerSettings(api: "ledger", consumer: "partner-portal") { grants } }', headers: { 'x-gateway-admin-token': DEMO_ADMIN_TOKEN }, data: { explorerSettings: null } },
    names: 'the answer is not a list of plugins (data',
  },
  {
    service: 'imports',
    path: '/v1/imports/imp_0001',
    answer: (list) => `{"id":"imp_0001","type":"swagger","status":"complete","message":${list}}`,
    hostile: { query: '{ import(id: "imp_0001") { id status } }', headers: { 'x-imports-apikey': DEMO_APIKEY }, field: 'import' },
    other: { query: '{ import(id: "imp_0002") { id } }', headers: { 'x-imports-apikey': OTHER_APIKEY }, data: { import: null } },
    names: 'the answer is not an import',
  },
];

beforeEach(async () => {
  for (const { service } of CASES) await t.emulator(service).reset();
});

const codes = (result: GraphQLResult<unknown>) => result.errors?.map((error) => error.extensions?.code);

describe('an upstream list of a million items, well under the byte cap', () => {
  for (const { service, path, answer, hostile, other, names } of CASES) {
    it.each(Object.keys(LISTS))(`${service}: a million %s is one UPSTREAM_ERROR at once, and another caller of the subgraph is answered meanwhile`, async (item) => {
      const emulator = t.emulator(service);
      await emulator.fault({ path, method: 'GET', status: 200, raw: answer(LISTS[item as keyof typeof LISTS]), contentType: 'application/json', times: 1 });
      const started = performance.now();
      const [refused, answered] = await Promise.all([t.gql(hostile.query, { headers: hostile.headers }), t.gql(other.query, { headers: other.headers })]);
      const elapsed = performance.now() - started;

      expect(refused.data).toEqual({ [hostile.field]: null });
      expect(codes(refused)).toEqual(['UPSTREAM_ERROR']);
      expect(refused.errors![0]).toMatchObject({ message: expect.stringContaining(names), extensions: { service, status: 200 } });
      expect(answered).toEqual({ data: other.data });
      // A 2xx that breaks its contract is not retried.
      expect((await emulator.requests()).filter((request) => request.path === path)).toHaveLength(1);
      expect(elapsed).toBeLessThan(LOOSE_BOUND_MS);
    });
  }
});
