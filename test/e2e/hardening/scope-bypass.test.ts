import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_PARTNER, DEMO_READER, GRAPH_CLIENT } from '../../../emulators/authorization-server/emulator.ts';
import { knownSecrets } from '../../support/logs.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * Ways around `@requiresScopes` that one caller could take alone, found by probing: a text that
 * collided with a document's decision in the field-access cache, an operation name that names no
 * operation, and a GET whose `query` parameter was percent-encoded past the landing page's check.
 */
for (const secret of [DEMO_PARTNER.clientSecret, DEMO_READER.clientSecret, GRAPH_CLIENT.clientSecret]) knownSecrets.add(secret);

const t = await startTestStack({ GATEWAY_AUTH: 'oauth2' });
const authUrl = t.stack.authorizationServerUrl!;
const marketplace = t.emulator('marketplace');
const recognition = t.emulator('recognition');

async function tokenFor(client: { clientId: string; clientSecret: string }, scope?: string): Promise<string> {
  const response = await fetch(`${authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
  });
  const { access_token: token } = (await response.json()) as { access_token: string };
  knownSecrets.add(token);
  return token;
}

// A reader may read recognition, not the marketplace, and write nothing; the partner may do all.
const reader = await tokenFor(DEMO_READER, 'recognition:read');
const partner = await tokenFor(DEMO_PARTNER);

async function post(token: string, body: unknown) {
  const response = await fetch(t.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: { extensions?: Record<string, unknown> }[] } };
}
const upstreamCalls = async () => [...(await marketplace.requests()), ...(await recognition.requests())].filter((request) => !request.path.startsWith("/__emulator/")).map((request) => `${request.method} ${request.path}`);
const fresh = () => `p${Math.random().toString(36).slice(2)}`;

describe('a field out of the caller’s scopes', () => {
  it('stays out after the caller sent `#` and the hash of the operation’s text (a comment, deciding nothing)', async () => {
    const query = `{ ${fresh()}: products(first: 2) { totalCount } }`;
    await post(reader, { query: `#${createHash('sha256').update(query).digest('hex')}` });
    await Promise.all([marketplace.clearRequests(), recognition.clearRequests()]);
    for (let round = 0; round < 2; round++) {
      const { body } = await post(reader, { query });
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
      expect(JSON.stringify(body.data)).not.toContain('totalCount');
    }
    expect(await upstreamCalls()).toEqual([]);
  });

  it('stays out of a mutation the same way', async () => {
    const mutation = `mutation { createApiKey(input: { label: "${fresh()}" }) { success } }`;
    await post(reader, { query: `#${createHash('sha256').update(mutation).digest('hex')}` });
    await Promise.all([marketplace.clearRequests(), recognition.clearRequests()]);
    const { body } = await post(reader, { query: mutation });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    expect(await upstreamCalls()).toEqual([]);
  });

  it('is never served for an operation name that names no operation: 400 OPERATION_RESOLUTION_FAILURE for everyone, nothing run', async () => {
    const body = { query: `query A { ${fresh()}: products(first: 2) { totalCount } }`, operationName: 'Nope' };
    await Promise.all([marketplace.clearRequests(), recognition.clearRequests()]);
    // The partner first (it once got a 500 and left the operation remembered for the fast path), then the reader.
    for (const token of [partner, reader, reader]) {
      const answer = await post(token, body);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]).toMatchObject({ message: 'Unknown operation named "Nope".', extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } });
      expect(answer.body.data).toBeUndefined();
    }
    const mutation = { query: `mutation M { createApiKey(input: { label: "${fresh()}" }) { success } }`, operationName: 'Other' };
    expect((await post(partner, mutation)).status).toBe(400);
    expect(await upstreamCalls()).toEqual([]);
  });

  it('is never served for a document of several operations sent without a name', async () => {
    const answer = await post(partner, { query: `query A { ${fresh()}: products(first: 1) { totalCount } } query B { hashtagTrends { hashtag } }` });
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toMatchObject({ message: 'Must provide operation name if query contains multiple operations.', extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } });
  });
});

describe('a field out of the caller’s scopes that the client left out', () => {
  it('is not in the answer, nor an error, when @skip or @include leaves it out; where it is in, it is null with its error', async () => {
    const query = 'query ($hide: Boolean!) { hashtagTrends { hashtag } products(first: 1) @skip(if: $hide) { totalCount } }';
    const hidden = await post(reader, { query, variables: { hide: true } });
    expect(hidden.body.errors).toBeUndefined();
    expect(Object.keys(hidden.body.data!)).toEqual(['hashtagTrends']);
    const shown = await post(reader, { query, variables: { hide: false } });
    expect(shown.body.data!.products).toBeNull();
    expect(shown.body.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
  });
});

describe('the landing page', () => {
  it('is the only GET served without a token: a query parameter, however encoded, is authenticated', async () => {
    const page = await fetch(t.graphqlUrl, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    for (const search of ['query=%7B__typename%7D', '%71uery=%7B__typename%7D', 'x=1&%71%75%65%72%79=%7B__typename%7D', 'extensions=%7B%7D']) {
      const response = await fetch(`${t.graphqlUrl}?${search}`, { headers: { accept: 'application/json, text/html;q=0.1', 'apollo-require-preflight': '1' } });
      expect(response.status, search).toBe(401);
    }
  });
});
