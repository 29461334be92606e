import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair } from 'jose';
import { createTokenVerifier, TokenRefused } from '../../../gateway/auth/tokens.ts';
import { listen } from '../../../lib/http.ts';
import { flood } from '../../support/flood.ts';

/**
 * The authorization server is an upstream like any other. An introspection answer (RFC 7662) that
 * floods or trickles costs the gateway at most 64 KiB and one deadline, and one that is not an
 * object refuses the token as "try again", never a crash; a key set (JWKS) is read up to 512 KiB.
 * A bare server of the test's own plays the endpoints and counts what it managed to send.
 */
type Behaviour = (res: http.ServerResponse) => void;
let behaviour: Behaviour = (res) => res.end('{}');
let sent = 0;
const server = http.createServer((req, res) => {
  req.resume();
  behaviour(res);
});
const started = await listen(server, 0);
afterAll(() => started.close());

const verifier = createTokenVerifier({ introspectionUrl: `${started.url}/introspect`, introspectionCacheSeconds: 0, timeoutMs: 1000 });

/** The next answer floods; `sent` counts from zero. */
function floodNext(): void {
  sent = 0;
  behaviour = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    flood(res, (bytes) => (sent += bytes));
  };
}

/** The next answer never ends, a byte every 100 ms: never idle long enough for an idle timeout. */
function trickleNext(): void {
  behaviour = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const drip = () => {
      if (res.destroyed) return;
      res.write(' ');
      setTimeout(drip, 100).unref();
    };
    drip();
  };
}

async function refusal(token: string, by = verifier): Promise<TokenRefused> {
  const outcome = await by.verify(token).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(TokenRefused);
  return outcome as TokenRefused;
}

describe('an introspection endpoint that misbehaves', () => {
  it('flooding its answer without a declared length: cut off past 64 KiB, the token refused as unavailable', async () => {
    floodNext();
    const refused = await refusal('opaque-token-flood');
    expect(refused).toMatchObject({ reason: 'introspection answered too much', unavailable: true });
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });

  it('declaring a length past 64 KiB: refused before the body is read', async () => {
    sent = 0;
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1024 * 1024) });
      res.write(Buffer.alloc(1024, 0x20));
    };
    expect(await refusal('opaque-token-declared')).toMatchObject({ reason: 'introspection answered too much', unavailable: true });
  });

  it('trickling its answer a byte at a time: given up at the deadline for the whole call', async () => {
    trickleNext();
    const begun = performance.now();
    expect(await refusal('opaque-token-trickle')).toMatchObject({ reason: 'the introspection endpoint could not be reached', unavailable: true });
    expect(performance.now() - begun).toBeLessThan(5000);
  });

  it('answering JSON that is not an object: refused as unavailable, not a crash', async () => {
    for (const body of ['null', '42', '["active"]']) {
      behaviour = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      expect(await refusal(`opaque-token-${body.length}`)).toMatchObject({ reason: 'introspection answered something that is not an object', unavailable: true });
    }
  });

  it('still accepts an active token it answers for properly', async () => {
    behaviour = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ active: true, client_id: 'partner', scope: 'recognition:read', exp: Math.floor(Date.now() / 1000) + 60 }));
    await expect(verifier.verify('opaque-token-good')).resolves.toMatchObject({ id: 'partner', scopes: new Set(['recognition:read']), via: 'introspection' });
  });
});

describe('a key set endpoint that misbehaves', () => {
  const jwtVerifier = createTokenVerifier({ jwksUrl: `${started.url}/jwks`, issuer: 'https://issuer.example', timeoutMs: 1000, jwksCooldownSeconds: 0 });
  async function signed(): Promise<string> {
    const { privateKey } = await generateKeyPair('RS256');
    return new SignJWT({ scope: 'recognition:read' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://issuer.example').setSubject('partner').setExpirationTime('5m').sign(privateKey);
  }

  it('flooding its answer: cut off past 512 KiB, the JWT refused as unavailable, not after reading the flood', async () => {
    floodNext();
    expect(await refusal(await signed(), jwtVerifier)).toMatchObject({ reason: "the authorization server's keys could not be read", unavailable: true });
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });

  it('trickling its answer: given up at the deadline, the JWT refused as unavailable', async () => {
    trickleNext();
    const begun = performance.now();
    expect(await refusal(await signed(), jwtVerifier)).toMatchObject({ reason: "the authorization server's keys could not be read", unavailable: true });
    expect(performance.now() - begun).toBeLessThan(5000);
  });
});
