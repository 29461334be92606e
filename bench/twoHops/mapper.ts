import http from 'node:http';
import { Pool } from 'undici';
import { listen, readBody } from '../../lib/http.ts';
import { customPropertiesOf, serviceDate } from '../../subgraphs/recognition/client.ts';

/**
 * The second hop of the hand-written reference (see `bench/twoHops.ts`): what a subgraph would be
 * if it served only the operations the reference times: a reward, the reward catalog, the
 * leaderboard, the redemptions with their rewards and a marketplace product. It reads the caller's
 * credentials and the variables, makes the REST calls, keeps the fields the operation selects, and
 * answers the same JSON the graph does. No GraphQL: no parsing, validation, execution or error
 * mapping; the operation is told by its first root field.
 */
const upstream = new Pool(process.env.TWO_HOPS_UPSTREAM!, { connections: 64, pipelining: 1 });
const marketplace = new Pool(process.env.TWO_HOPS_MARKETPLACE!, { connections: 64, pipelining: 1 });
const STATUSES: Record<string, string> = { active: 'ACTIVE', archived: 'ARCHIVED' };

type Raw = Record<string, string | number | boolean | null>;

async function get<T>(path: string): Promise<T> {
  const response = await upstream.request({ method: 'GET', path: `/api/v1${path}`, headers: { accept: 'application/json' } });
  return JSON.parse(await response.body.text()) as T;
}

const text = (value: unknown) => (value == null ? null : value);
const description = (value: unknown) => {
  const described = value as { text?: unknown; html?: unknown } | null | undefined;
  return described ? { text: text(described.text), html: text(described.html) } : null;
};

async function reward(id: string, token: string) {
  const found = await get<Raw & { description: unknown }>(`/rewards/${encodeURIComponent(id)}?access_token=${token}`);
  return {
    reward: {
      id: String(found.id),
      name: text(found.name),
      price: text(found.price),
      displayPrice: text(found.display_price),
      description: description(found.description),
      imageUrl: text(found.image_url),
      disclaimerHtml: text(found.disclaimer_html),
      warning: text(found.warning),
      quantity: text(found.quantity),
      type: text(found.type),
    },
  };
}

async function rewardCatalog(token: string) {
  const groups = await get<{ type: string; name: string; rewards: { items: (Raw & { description: unknown; denominations: Raw[] })[] } }[]>(`/rewards?access_token=${token}`);
  return {
    rewardCatalog: groups.map((group) => ({
      type: text(group.type),
      name: text(group.name),
      rewards: group.rewards.items.map((item) => ({
        name: text(item.name),
        imageUrl: text(item.image_url),
        minimumDisplayPrice: text(item.minimum_display_price),
        description: description(item.description),
        disclaimerHtml: text(item.disclaimer_html),
        warning: text(item.warning),
        denominations: item.denominations.map((denomination) => ({ id: String(denomination.id), name: text(denomination.name), price: text(denomination.price), displayPrice: text(denomination.display_price) })),
      })),
    })),
  };
}

type MarketplaceProduct = Raw & { categories: Raw[]; images: string[]; variations: (Raw & { specifications: { key: string; value: string }[] })[] };

async function product(sku: string, headers: Record<string, string>) {
  const response = await marketplace.request({ method: 'GET', path: `/products/${encodeURIComponent(sku)}`, headers: { accept: 'application/json', ...headers } });
  const found = JSON.parse(await response.body.text()) as MarketplaceProduct;
  return {
    product: {
      sku: String(found.sku),
      name: text(found.name),
      description: text(found.description),
      status: text(found.status),
      qty: text(found.qty),
      price: text(found.price),
      promotionalPrice: text(found.promotional_price),
      brand: text(found.brand),
      ean: text(found.ean),
      categories: found.categories.map((category) => ({ code: text(category.code), name: text(category.name) })),
      images: found.images,
      variations: found.variations.map((variation) => {
        const price = variation.specifications.find((specification) => specification.key === 'price')?.value;
        return { sku: String(variation.sku), qty: text(variation.qty), price: price === undefined ? null : Number(price) };
      }),
    },
  };
}

function selectedUser(count: number, user: Raw) {
  return {
    count,
    user: {
      id: String(user.id),
      displayName: user.display_name ?? null,
      username: user.username ?? null,
      email: user.email ?? null,
      profilePicUrl: user.profile_pic_url ?? null,
      country: user.country ?? null,
      timeZone: user.time_zone ?? null,
      status: STATUSES[String(user.status)] ?? null,
      customProperties: customPropertiesOf(user),
    },
  };
}

async function leaderboard(start: string, token: string) {
  const entries = await get<{ count: number; user: Raw }[]>(`/analytics/leaderboards?start_date=${encodeURIComponent(serviceDate(start))}&access_token=${token}`);
  return { leaderboard: entries.map((entry) => selectedUser(entry.count, entry.user)) };
}

/** Each redemption's reward asked for as soon as that redemption is in, each distinct reward once. */
async function redemptions(ids: readonly string[], token: string) {
  const rewards = new Map<string, Promise<Raw>>();
  const rewardOf = (id: string) => {
    let reward = rewards.get(id);
    if (!reward) rewards.set(id, (reward = get<Raw>(`/rewards/${encodeURIComponent(id)}?access_token=${token}`)));
    return reward;
  };
  const list = await Promise.all(
    ids.map(async (id) => {
      const redemption = await get<Raw & { reward_details: Raw }>(`/redemptions/${encodeURIComponent(id)}?access_token=${token}`);
      const reward = await rewardOf(String(redemption.reward_details.id));
      return {
        id: String(redemption.id),
        state: redemption.state ?? null,
        createdAt: redemption.created_at == null ? null : new Date(String(redemption.created_at)).toISOString(),
        certificateUrl: redemption.certificate_url ?? null,
        reward: { id: String(reward.id), name: reward.name ?? null, displayPrice: reward.display_price ?? null, imageUrl: reward.image_url ?? null },
      };
    }),
  );
  return { redemptions: list };
}

const server = http.createServer(async (req, res) => {
  const { query, variables = {} } = JSON.parse((await readBody(req, 1 << 20)).toString()) as { query: string; variables?: { start?: string; ids?: string[]; id?: string; sku?: string } };
  const token = encodeURIComponent(String(req.headers['x-recognition-token']));
  const root = /\{\s*(\w+)/.exec(query)?.[1];
  const marketplaceHeaders = { 'x-user-email': String(req.headers['x-marketplace-email']), 'x-api-key': String(req.headers['x-marketplace-api-key']), 'x-accountmanager-key': String(req.headers['x-marketplace-account-key']) };
  const data =
    root === 'redemptions'
      ? await redemptions(variables.ids!, token)
      : root === 'leaderboard'
        ? await leaderboard(variables.start!, token)
        : root === 'reward'
          ? await reward(variables.id!, token)
          : root === 'rewardCatalog'
            ? await rewardCatalog(token)
            : await product(variables.sku!, marketplaceHeaders);
  const text = `${JSON.stringify({ data })}\n`;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});
const started = await listen(server, 0, '127.0.0.1');
console.log(`two-hops mapper on ${started.url}`);
