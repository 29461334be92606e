import { DEMO_CREDENTIALS } from '../emulators/marketplace/data.ts';
import { DEMO_TOKENS } from '../emulators/recognition/data.ts';
import { serviceDate } from '../subgraphs/recognition/client.ts';

/** The floor's HTTP client: straight to an emulator, as a hand-written client of the REST API. */
export interface Upstream {
  /** GETs a path (with its query) from a service's emulator and parses the JSON; a non-2xx answer throws. */
  get(service: string, path: string, headers?: Record<string, string>): Promise<unknown>;
}

/**
 * One reference operation: the same data fetched through the graph and straight from the REST
 * API. To benchmark a new one (marketplace, dashboards), add an entry to `REFERENCE_OPERATIONS`.
 */
export interface ReferenceOperation {
  name: string;
  description: string;
  /** Sent to the gateway with every service's demo credential header. */
  query: string;
  variables?: Record<string, unknown>;
  /** The floor: what an ideal client would do, independent calls in parallel. */
  floor(upstream: Upstream): Promise<unknown>;
  /** The fewest upstream calls the REST API allows for this data: one per distinct resource. */
  minUpstreamCalls: number;
  /** A message when the graph's `data` is not what was asked for; checked before any timing. */
  check(data: Record<string, unknown>): string | undefined;
}

const token = DEMO_TOKENS.admin;
const recognition = (path: string) => `/api/v1${path}${path.includes('?') ? '&' : '?'}access_token=${token}`;

// The marketplace's own header names, as its spec documents them.
const marketplaceHeaders = { 'x-user-email': DEMO_CREDENTIALS.email, 'x-api-key': DEMO_CREDENTIALS.apiKey, 'x-accountmanager-key': DEMO_CREDENTIALS.accountKey };

const REWARD_ID = 'rw_bookshop_25';
const SKU = 'SKU-0003';
/** The upstream's page size: one page is one call. */
const PRODUCTS_PAGE = 10;
// rd_001..rd_020 of the seeded data; redemption i redeems reward i % 8, so they share 8 rewards.
const REDEMPTION_IDS = Array.from({ length: 20 }, (_, index) => `rd_${String(index + 1).padStart(3, '0')}`);
const DISTINCT_REWARDS = 8;
const LEADERBOARD_SIZE = 100;
/** 60 days back covers the whole seeded history, so the leaderboard is a full 100. */
const LEADERBOARD_START = new Date(Date.now() - 59 * 24 * 60 * 60 * 1000).toISOString().slice(0, 10);

const lengthIs = (value: unknown, length: number, what: string) =>
  Array.isArray(value) && value.length === length ? undefined : `expected ${length} ${what}, got ${Array.isArray(value) ? value.length : typeof value}`;

export const REFERENCE_OPERATIONS: readonly ReferenceOperation[] = [
  {
    name: 'reward',
    description: 'a reward by id',
    query: 'query Reward($id: ID!) { reward(id: $id) { id name price displayPrice description { text html } imageUrl disclaimerHtml warning quantity type } }',
    variables: { id: REWARD_ID },
    floor: (upstream) => upstream.get('recognition', recognition(`/rewards/${REWARD_ID}`)),
    minUpstreamCalls: 1,
    check: (data) => ((data.reward as { id?: string } | null)?.id === REWARD_ID ? undefined : `expected reward ${REWARD_ID}`),
  },
  {
    name: 'rewardCatalog',
    description: 'the reward catalog',
    query: '{ rewardCatalog { type name rewards { name imageUrl minimumDisplayPrice description { text html } disclaimerHtml warning denominations { id name price displayPrice } } } }',
    floor: (upstream) => upstream.get('recognition', recognition('/rewards')),
    minUpstreamCalls: 1,
    check: (data) => lengthIs(data.rewardCatalog, 3, 'reward groups'),
  },
  {
    name: 'leaderboard100',
    description: 'a leaderboard of 100 users',
    query:
      'query Leaderboard($start: Date) { leaderboard(startDate: $start) { count user { id displayName username email profilePicUrl country timeZone status customProperties { name value } } } }',
    variables: { start: LEADERBOARD_START },
    floor: (upstream) => upstream.get('recognition', recognition(`/analytics/leaderboards?start_date=${encodeURIComponent(serviceDate(LEADERBOARD_START))}`)),
    minUpstreamCalls: 1,
    check: (data) => lengthIs(data.leaderboard, LEADERBOARD_SIZE, 'leaderboard entries'),
  },
  {
    name: 'redemptions20',
    description: '20 redemptions with their rewards',
    query: 'query Redemptions($ids: [ID!]!) { redemptions(ids: $ids) { id state createdAt certificateUrl reward { id name displayPrice imageUrl } } }',
    variables: { ids: REDEMPTION_IDS },
    async floor(upstream) {
      // As the graph does: each redemption's reward is asked for as soon as that redemption is in,
      // and each distinct reward once.
      const rewards = new Map<string, Promise<unknown>>();
      const rewardOf = (id: string) => {
        let reward = rewards.get(id);
        if (!reward) rewards.set(id, (reward = upstream.get('recognition', recognition(`/rewards/${id}`))));
        return reward;
      };
      return Promise.all(
        REDEMPTION_IDS.map(async (id) => {
          const redemption = (await upstream.get('recognition', recognition(`/redemptions/${id}`))) as { reward_details: { id: string } };
          return { redemption, reward: await rewardOf(redemption.reward_details.id) };
        }),
      );
    },
    minUpstreamCalls: REDEMPTION_IDS.length + DISTINCT_REWARDS,
    check(data) {
      const list = data.redemptions as ({ reward?: { id?: string } | null } | null)[];
      return lengthIs(list, REDEMPTION_IDS.length, 'redemptions') ?? (list.every((item) => item?.reward?.id) ? undefined : 'a redemption came without its reward');
    },
  },
  {
    name: 'product',
    description: 'a marketplace product by SKU',
    query:
      'query Product($sku: String!) { product(sku: $sku) { sku name description status qty price promotionalPrice brand ean categories { code name } images variations { sku qty price } } }',
    variables: { sku: SKU },
    floor: (upstream) => upstream.get('marketplace', `/products/${SKU}`, marketplaceHeaders),
    minUpstreamCalls: 1,
    check: (data) => ((data.product as { sku?: string } | null)?.sku === SKU ? undefined : `expected product ${SKU}`),
  },
  {
    name: 'products10',
    description: 'a page of 10 marketplace products',
    query: `{ products(first: ${PRODUCTS_PAGE}) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { sku name status qty price brand images variations { sku qty } } } } }`,
    floor: (upstream) => upstream.get('marketplace', '/products', marketplaceHeaders),
    minUpstreamCalls: 1,
    check: (data) => lengthIs((data.products as { edges?: unknown } | null)?.edges, PRODUCTS_PAGE, 'products'),
  },
];
