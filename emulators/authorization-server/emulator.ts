import { randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { fieldsBody } from '../kit/bodies.ts';
import { createClock, type EmulatorDefinition } from '../kit/emulator.ts';
import type { Reply, Route, RouteRequest } from '../kit/router.ts';

/**
 * An OAuth 2.0 authorization server for the graph's own sign-in, in the demo and in tests: the
 * client credentials grant (RFC 6749 §4.4), JWT access tokens signed with a rotating key published
 * as a JWKS, opaque tokens checked by introspection (RFC 7662), revocation (RFC 7009), and server
 * metadata (RFC 8414). Its token endpoint answers the browser's CORS preflight, so Apollo Sandbox's
 * own OAuth 2.0 flow can fetch a token from it.
 */

export interface AuthorizationClient {
  clientId: string;
  clientSecret: string;
  /** Scopes it may ask for; a token request without `scope` gets all of them. */
  scopes: string[];
  /** JWT (verified by the graph against the JWKS) or opaque (introspected). @default 'jwt' */
  format?: 'jwt' | 'opaque';
  /** @default DEMO_AUDIENCE */
  audience?: string;
  /** @default 3600 */
  ttlSeconds?: number;
}

export const DEMO_AUDIENCE = 'rest-graph';
/** The graph's own client at the introspection endpoint. */
export const GRAPH_CLIENT = { clientId: 'rest-graph-gateway', clientSecret: 'demo-graph-introspection-secret-3f8a1c6e' };

const SERVICES = ['recognition', 'marketplace', 'dashboards', 'messaging', 'imports'];
/** The demo partner: every service, read and write, with its service credentials preloaded in the graph. */
export const DEMO_PARTNER: AuthorizationClient = {
  clientId: 'demo-partner',
  clientSecret: 'demo-partner-secret-8d3b6f1a4c9e2d7b',
  scopes: SERVICES.flatMap((service) => [`${service}:read`, `${service}:write`]),
};
/** A partner that may only read. */
export const DEMO_READER: AuthorizationClient = {
  clientId: 'demo-reader',
  clientSecret: 'demo-reader-secret-2c7e9a4f1b6d3e8a',
  scopes: SERVICES.map((service) => `${service}:read`),
};

interface Issued {
  clientId: string;
  scope: string;
  audience: string;
  exp: number;
  iat: number;
  revoked: boolean;
}

interface SigningKey {
  kid: string;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  publicJwk: JWK;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type',
  'access-control-max-age': '600',
};
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const oauthError = (status: number, error: string, description: string, headers: Record<string, string> = {}): Reply => ({
  status,
  body: { error, error_description: description },
  headers: { ...CORS, ...NO_STORE, ...headers },
});

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = randomBytes(8).toString('hex');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export async function createAuthorizationServer({ clients: seeded = [DEMO_PARTNER, DEMO_READER] }: { clients?: AuthorizationClient[] } = {}) {
  const clock = createClock();
  let issuer = '';
  let keys: SigningKey[] = [await newKey()];
  let clients = new Map(seeded.map((client) => [client.clientId, client]));
  /** Every token by its whole value: a JWT's own claims are never trusted to find it (one signed by nobody would be). */
  let issued = new Map<string, Issued>();

  /** Client authentication by HTTP Basic or in the body (RFC 6749 §2.3.1). */
  function clientOf(request: RouteRequest, fields: Record<string, unknown>): AuthorizationClient | Reply {
    const basic = /^Basic\s+(.+)$/i.exec(String(request.headers.authorization ?? ''))?.[1];
    let id: string | undefined;
    let secret: string | undefined;
    if (basic) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        id = decodeURIComponent(decoded.slice(0, colon));
        secret = decodeURIComponent(decoded.slice(colon + 1));
      }
    } else if (typeof fields.client_id === 'string' && typeof fields.client_secret === 'string') {
      id = fields.client_id;
      secret = fields.client_secret;
    }
    const client = id === undefined ? undefined : id === GRAPH_CLIENT.clientId ? { ...GRAPH_CLIENT, scopes: [] } : clients.get(id);
    if (!client || secret === undefined || !sameSecret(secret, client.clientSecret)) {
      return oauthError(401, 'invalid_client', 'client authentication failed', basic ? { 'www-authenticate': 'Basic realm="authorization-server"' } : {});
    }
    return client;
  }

  async function token(request: RouteRequest): Promise<Reply> {
    const fields = (await fieldsBody(request)) ?? {};
    const client = clientOf(request, fields);
    if ('status' in client) return client;
    if (fields.grant_type !== 'client_credentials') return oauthError(400, 'unsupported_grant_type', 'this server issues tokens by the client_credentials grant');
    const asked = typeof fields.scope === 'string' && fields.scope.trim() ? fields.scope.trim().split(/\s+/) : client.scopes;
    if (asked.some((scope) => !client.scopes.includes(scope))) return oauthError(400, 'invalid_scope', 'a scope asked for is not granted to this client');
    const iat = Math.floor(clock.now() / 1000);
    const record: Issued = { clientId: client.clientId, scope: asked.join(' '), audience: client.audience ?? DEMO_AUDIENCE, iat, exp: iat + (client.ttlSeconds ?? 3600), revoked: false };
    let accessToken: string;
    if (client.format === 'opaque') {
      accessToken = randomBytes(24).toString('base64url');
      issued.set(accessToken, record);
    } else {
      const jti = randomBytes(12).toString('base64url');
      const key = keys[0]!;
      accessToken = await new SignJWT({ scope: record.scope, client_id: client.clientId })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(record.audience)
        .setSubject(client.clientId)
        .setIssuedAt(iat)
        .setExpirationTime(record.exp)
        .setJti(jti)
        .sign(key.privateKey);
      issued.set(accessToken, record);
    }
    return { status: 200, body: { access_token: accessToken, token_type: 'bearer', expires_in: record.exp - iat, scope: record.scope }, headers: { ...CORS, ...NO_STORE } };
  }

  const recordOf = (value: string): Issued | undefined => issued.get(value);

  async function introspect(request: RouteRequest): Promise<Reply> {
    const fields = (await fieldsBody(request)) ?? {};
    const caller = clientOf(request, fields);
    if ('status' in caller) return caller;
    const record = typeof fields.token === 'string' ? recordOf(fields.token) : undefined;
    const now = clock.now() / 1000;
    if (!record || record.revoked || record.exp <= now) return { status: 200, body: { active: false }, headers: NO_STORE };
    return {
      status: 200,
      body: { active: true, scope: record.scope, client_id: record.clientId, sub: record.clientId, aud: record.audience, iss: issuer, exp: record.exp, iat: record.iat, token_type: 'Bearer' },
      headers: NO_STORE,
    };
  }

  async function revoke(request: RouteRequest): Promise<Reply> {
    const fields = (await fieldsBody(request)) ?? {};
    const caller = clientOf(request, fields);
    if ('status' in caller) return caller;
    const record = typeof fields.token === 'string' ? recordOf(fields.token) : undefined;
    // RFC 7009: revoking an unknown token is not an error.
    if (record && (record.clientId === caller.clientId || caller.clientId === GRAPH_CLIENT.clientId)) record.revoked = true;
    return { status: 200, headers: CORS };
  }

  const preflight = (): Reply => ({ status: 204, headers: CORS });
  const routes: Route[] = [
    { method: 'POST', path: '/oauth2/token', handler: token },
    { method: 'OPTIONS', path: '/oauth2/token', handler: preflight },
    { method: 'POST', path: '/oauth2/introspect', handler: introspect },
    { method: 'POST', path: '/oauth2/revoke', handler: revoke },
    { method: 'OPTIONS', path: '/oauth2/revoke', handler: preflight },
    { method: 'GET', path: '/.well-known/jwks.json', handler: () => ({ status: 200, body: { keys: keys.map((key) => key.publicJwk) } }) },
    {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      handler: () => ({
        status: 200,
        body: {
          issuer,
          token_endpoint: `${issuer}/oauth2/token`,
          introspection_endpoint: `${issuer}/oauth2/introspect`,
          revocation_endpoint: `${issuer}/oauth2/revoke`,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          scopes_supported: [...new Set([...clients.values()].flatMap((client) => client.scopes))],
        },
        headers: { 'access-control-allow-origin': '*' },
      }),
    },
  ];

  const controls: Route[] = [
    {
      method: 'POST',
      path: '/__emulator/clients',
      handler: async (request) => {
        const body = (await fieldsBody(request)) as Partial<AuthorizationClient> | undefined;
        if (!body || typeof body.clientId !== 'string' || typeof body.clientSecret !== 'string' || !Array.isArray(body.scopes)) {
          return { status: 400, body: { message: 'expected {clientId, clientSecret, scopes: [...], format?, audience?, ttlSeconds?}' } };
        }
        clients.set(body.clientId, body as AuthorizationClient);
        return { status: 201, body: { clientId: body.clientId } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/rotate-keys',
      handler: async (request) => {
        const body = (await fieldsBody(request)) ?? {};
        const fresh = await newKey();
        // Publishing the old key for a while lets tokens signed before the rotation live out their time.
        keys = body.dropOld === true ? [fresh] : [fresh, ...keys];
        return { status: 200, body: { kid: fresh.kid } };
      },
    },
  ];

  const definition: EmulatorDefinition = {
    name: 'authorization-server',
    routes,
    controls,
    clock,
    reset() {
      clients = new Map(seeded.map((client) => [client.clientId, client]));
      issued = new Map();
    },
  };
  return {
    definition,
    /** Tokens name the server by its URL, known once it listens. */
    setIssuer(url: string) {
      issuer = url;
    },
  };
}
