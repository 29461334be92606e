import http from 'node:http';
import { Pool } from 'undici';
import { listen, readBody } from '../../lib/http.ts';
import { customPropertiesOf, serviceDate } from '../../subgraphs/recognition/client.ts';

/**
 * The second hop of the hand-written reference (see `bench/twoHops.ts`): what a subgraph would be
 * if it served only the operations the reference times, the leaderboard and the redemptions with
 * their rewards. It reads the caller's token and the variables, makes the REST calls, keeps the
 * fields the operation selects, and answers the same JSON the graph does. No GraphQL: no parsing,
 * validation, execution or error mapping.
 */
const upstream = new Pool(process.env.TWO_HOPS_UPSTREAM!, { connections: 64, pipelining: 1 });
const STATUSES: Record<string, string> = { active: 'ACTIVE', archived: 'ARCHIVED' };

type Raw = Record<string, string | number | boolean | null>;

async function get<T>(path: string): Promise<T> {
  const response = await upstream.request({ method: 'GET', path: `/api/v1${path}`, headers: { accept: 'application/json' } });
  return JSON.parse(await response.body.text()) as T;
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
  const { variables } = JSON.parse((await readBody(req, 1 << 20)).toString()) as { variables: { start?: string; ids?: string[] } };
  const token = encodeURIComponent(String(req.headers['x-recognition-token']));
  const data = variables.ids ? await redemptions(variables.ids, token) : await leaderboard(variables.start!, token);
  const text = `${JSON.stringify({ data })}\n`;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});
const started = await listen(server, 0, '127.0.0.1');
console.log(`two-hops mapper on ${started.url}`);
