import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A bare broadcast over graphql-ws (see `bench/subscriptions.ts`), the comparison the fan-out's
 * targets were set against: it answers the protocol's handshake, serialises each event once, and
 * sends the same frame to every subscribed socket with `ws`. No webhook, no subgraph, no plan: timed
 * with the same subscribers as the gateway, it shows what this machine, its loopback and the
 * subscribers' own reading cost, so that the gateway's figures can be read against it.
 *
 * `POST /events` with `{"reason": "..."}` sends one event; `GET /subscribers` counts the
 * subscriptions held. The port goes to the parent over IPC once listening.
 */
const MAX_EVENT_BYTES = 4096;

const subscribed = new Set<WebSocket>();
let sequence = 0;

/** The frame the gateway would send for the benchmark's subscription: the same fields, the same id. */
function frameOf(reason: string): Buffer {
  sequence += 1;
  const bonusCreated = { id: `evt_${sequence}`, occurredAt: new Date().toISOString(), bonus: { id: `bns_${sequence}`, amount: 10, reason, hashtag: '#benchmark', giver: { id: 'usr_003', displayName: 'Benchmark Giver' } } };
  return Buffer.from(JSON.stringify({ id: '1', type: 'next', payload: { data: { bonusCreated } } }));
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/subscribers') {
    res.end(String(subscribed.size));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/events') {
    res.writeHead(404).end();
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
    if (body.length > MAX_EVENT_BYTES) req.destroy();
  });
  req.on('end', () => {
    let reason: unknown;
    try {
      ({ reason } = JSON.parse(body) as { reason?: unknown });
    } catch {
      // Refused below, as any body without a reason.
    }
    if (typeof reason !== 'string') {
      res.writeHead(400).end();
      return;
    }
    const frame = frameOf(reason);
    res.writeHead(201).end();
    for (const socket of subscribed) socket.send(frame, { binary: false });
  });
});

const sockets = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: 64 * 1024 });
sockets.on('connection', (socket) => {
  socket.on('message', (data) => {
    let type: unknown;
    try {
      type = (JSON.parse(String(data)) as { type?: unknown } | null)?.type;
    } catch {
      // As graphql-ws closes on a message it cannot read.
      socket.close(4400, 'Invalid message received');
      return;
    }
    if (type === 'connection_init') socket.send('{"type":"connection_ack"}');
    else if (type === 'subscribe') subscribed.add(socket);
  });
  // An oversized or broken frame: ws closes the socket itself (1009, 1002); without a listener it would end the process.
  socket.on('error', () => subscribed.delete(socket));
  socket.on('close', () => subscribed.delete(socket));
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
});
// The benchmark is gone (or done with us): go too.
process.once('disconnect', () => process.exit(0));
