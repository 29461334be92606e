import http from 'node:http';
import { Pool } from 'undici';
import { listen, readBody } from '../../lib/http.ts';
import { customPropertiesOf, serviceDate } from '../../subgraphs/recognition/client.ts';

/**
 * The second hop of the hand-written reference (see `bench/twoHops.ts`): what a subgraph would be
 * if it served one operation only, the leaderboard. It reads the caller's token and the `start`
 * variable, makes the one REST call, keeps the fields the operation selects, and answers the same
 * JSON the graph does. No GraphQL: no parsing, validation, execution or error mapping.
 */
const upstream = new Pool(process.env.TWO_HOPS_UPSTREAM!, { connections: 64, pipelining: 1 });
const STATUSES: Record<string, string> = { active: 'ACTIVE', archived: 'ARCHIVED' };

type RawUser = Record<string, string | number | boolean | null>;

function selected(count: number, user: RawUser) {
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

const server = http.createServer(async (req, res) => {
  const { variables } = JSON.parse((await readBody(req, 1 << 20)).toString()) as { variables: { start: string } };
  const token = encodeURIComponent(String(req.headers['x-recognition-token']));
  const response = await upstream.request({
    method: 'GET',
    path: `/api/v1/analytics/leaderboards?start_date=${encodeURIComponent(serviceDate(variables.start))}&access_token=${token}`,
    headers: { accept: 'application/json' },
  });
  const entries = JSON.parse(await response.body.text()) as { count: number; user: RawUser }[];
  const text = `${JSON.stringify({ data: { leaderboard: entries.map((entry) => selected(entry.count, entry.user)) } })}\n`;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});
const started = await listen(server, 0, '127.0.0.1');
console.log(`two-hops mapper on ${started.url}`);
