import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../lib/http.ts';

export const DASHBOARD_PATH = '/dashboard';

interface Asset {
  body: Buffer;
  type: string;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);

/**
 * The live recognition dashboard: one page, its script and graphql-ws's browser build, all served
 * from here so the page works without any CDN. Everything is read once, at start.
 */
export function createDashboard({ demoToken }: { demoToken?: string | undefined }) {
  const own = (name: string) => readFileSync(new URL(`./dashboard/${name}`, import.meta.url));
  // graphql-ws does not export its UMD build; its package folder is the stable way to it.
  const graphqlWsFolder = dirname(createRequire(import.meta.url).resolve('graphql-ws/package.json'));
  const page = own('index.html').toString('utf8').replace('{{DEMO_TOKEN}}', escapeHtml(demoToken ?? ''));
  const assets = new Map<string, Asset>([
    [DASHBOARD_PATH, { body: Buffer.from(page), type: 'text/html; charset=utf-8' }],
    [`${DASHBOARD_PATH}/app.js`, { body: own('app.js'), type: 'text/javascript; charset=utf-8' }],
    [`${DASHBOARD_PATH}/dashboard.css`, { body: own('dashboard.css'), type: 'text/css; charset=utf-8' }],
    [`${DASHBOARD_PATH}/graphql-ws.js`, { body: readFileSync(join(graphqlWsFolder, 'umd', 'graphql-ws.min.js')), type: 'text/javascript; charset=utf-8' }],
  ]);

  return {
    handles: (pathname: string) => pathname === DASHBOARD_PATH || pathname.startsWith(`${DASHBOARD_PATH}/`),
    handle(req: IncomingMessage, res: ServerResponse, pathname: string): void {
      const asset = assets.get(pathname === `${DASHBOARD_PATH}/` ? DASHBOARD_PATH : pathname);
      if (!asset) return sendJson(res, 404, { message: `no route ${req.method} ${pathname}` });
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { message: 'the dashboard is read with GET' }, { allow: 'GET, HEAD' });
      res.writeHead(200, {
        'content-type': asset.type,
        'content-length': asset.body.length,
        // The page may carry the demo credential: never cached, never framed, never leaked by referrer.
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : asset.body);
    },
  };
}
