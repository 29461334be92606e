import http from 'node:http';
import { Pool } from 'undici';
import { listen, readBody } from '../../lib/http.ts';

/** The credential headers the mapper needs: the recognition token and the marketplace's three. */
const FORWARDED = ['x-recognition-token', 'x-marketplace-email', 'x-marketplace-api-key', 'x-marketplace-account-key'];

/**
 * The first hop of the hand-written reference (see `bench/twoHops.ts`): a gateway that only
 * forwards. The request body and the credentials go to the mapper; its bytes come back.
 */
const mapper = new Pool(process.env.TWO_HOPS_MAPPER!, { connections: 128, pipelining: 1 });

const server = http.createServer(async (req, res) => {
  const body = await readBody(req, 1 << 20);
  const response = await mapper.request({
    method: 'POST',
    path: '/graphql',
    headers: Object.fromEntries([['content-type', 'application/json'], ...FORWARDED.map((name) => [name, String(req.headers[name])])]),
    body,
  });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
  res.end(bytes);
});
const started = await listen(server, 0, '127.0.0.1');
console.log(`two-hops proxy on ${started.url}`);
