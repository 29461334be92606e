import http, { type IncomingMessage } from 'node:http';
import net, { type Socket } from 'node:net';
import { listen, readBody } from '../../lib/http.ts';

/** One request or WebSocket the balancer handed to a backend. */
export interface ProxyHit {
  /** The backend's index in `setBackends`. */
  backend: number;
  method: string;
  path: string;
  upgrade: boolean;
}

export interface RoundRobinProxy {
  url: string;
  /** The replicas behind this address, tried in turn. */
  setBackends(urls: readonly string[]): void;
  /** Everything handed to a backend, in order. */
  hits: ProxyHit[];
  /** WebSocket tunnels open now, by backend. */
  openTunnels(): number[];
  /** Cuts every WebSocket tunnel open now, as a network fault would: both ends see the connection drop. */
  cutTunnels(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'];

const withoutHopByHop = (headers: http.IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name)));

const refused = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';

/**
 * The load balancer in front of a pair of replicas, as small as a test needs: HTTP requests and
 * WebSocket upgrades go to the backends in turn; a backend that refuses the connection (a killed
 * replica) is skipped for the next one, as a balancer's passive health check would. A request is
 * never sent twice once a backend accepted its connection. WebSockets are tunnelled byte for byte,
 * so close frames pass through, and a backend that dies cuts its tunnels.
 */
export async function startRoundRobinProxy(): Promise<RoundRobinProxy> {
  let backends: URL[] = [];
  let turn = 0;
  const hits: ProxyHit[] = [];
  const tunnels = new Set<{ backend: number; client: Socket; upstream: Socket }>();
  const order = () => {
    const start = turn++ % Math.max(backends.length, 1);
    return backends.map((_, index) => (start + index) % backends.length);
  };

  async function forward(req: IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req, 16 * 1024 * 1024);
    for (const backend of order()) {
      const target = backends[backend]!;
      const answered = await new Promise<boolean>((resolve) => {
        const upstream = http.request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, agent: false, headers: { ...withoutHopByHop(req.headers), 'content-length': String(body.length) } },
          (response) => {
            hits.push({ backend, method: req.method ?? 'GET', path: req.url ?? '/', upgrade: false });
            res.writeHead(response.statusCode ?? 502, withoutHopByHop(response.headers));
            response.pipe(res);
            res.once('close', () => response.destroy());
            resolve(true);
          },
        );
        upstream.once('error', (error) => {
          if (refused(error)) return resolve(false);
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
          resolve(true);
        });
        upstream.end(body);
      });
      if (answered) return;
    }
    res.writeHead(502).end();
  }

  function tunnel(req: IncomingMessage, client: Socket, head: Buffer, candidates: number[]): void {
    const backend = candidates.shift();
    if (backend === undefined) return void client.destroy();
    const target = backends[backend]!;
    const upstream = net.connect(Number(target.port), target.hostname);
    upstream.once('error', (error) => {
      if (refused(error)) return tunnel(req, client, head, candidates);
      client.destroy();
    });
    upstream.once('connect', () => {
      hits.push({ backend, method: req.method ?? 'GET', path: req.url ?? '/', upgrade: true });
      const entry = { backend, client, upstream };
      tunnels.add(entry);
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let index = 0; index < req.rawHeaders.length; index += 2) lines.push(`${req.rawHeaders[index]}: ${req.rawHeaders[index + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
      const cut = () => {
        tunnels.delete(entry);
        client.destroy();
        upstream.destroy();
      };
      upstream.once('close', cut);
      client.once('close', cut);
      upstream.on('error', cut);
      client.on('error', cut);
    });
  }

  const cutTunnels = () => {
    for (const entry of tunnels) {
      entry.client.destroy();
      entry.upstream.destroy();
    }
  };
  const server = http.createServer((req, res) => {
    forward(req, res).catch(() => res.destroy());
  });
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => tunnel(req, client, head, order()));
  const started = await listen(server, 0);
  return {
    url: started.url,
    setBackends(urls) {
      backends = urls.map((url) => new URL(url));
    },
    hits,
    openTunnels: () => [...tunnels].map((entry) => entry.backend),
    cutTunnels,
    async close() {
      cutTunnels();
      await started.close();
    },
  };
}
