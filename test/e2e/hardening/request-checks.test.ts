import { beforeEach, describe, expect, it } from 'vitest';
import { startTestStack } from '../../support/stack.ts';
import { overHttp } from '../../support/transports.ts';

/**
 * Issue 14, item 6: the fast paths (the gateway's pass-through, a subgraph's compiled repeats)
 * apply Apollo Server's request checks before anything runs. A repeat of a remembered mutation
 * sent with a content type a browser may send cross-site without a preflight is refused as
 * Apollo refuses it, and reaches no upstream.
 */
const t = await startTestStack();
const emulator = t.emulator('recognition');
const recognition = t.stack.services.find((service) => service.name === 'recognition')!;
const MUTATION = { query: 'mutation Forget { deleteWebhook(id: "wh_csrf_probe") { __typename } }' };
const deletes = async () => (await emulator.requests()).filter((request) => request.method === 'DELETE');

beforeEach(async () => {
  await emulator.clearRequests();
});

describe('CSRF prevention and content types on the fast paths', () => {
  it.each([
    ['the gateway', () => t.graphqlUrl],
    ['a subgraph', () => recognition.subgraphUrl],
  ])('%s refuses a remembered mutation sent as text/plain;x=json or form;json, calling nothing', async (_name, url) => {
    // Once as JSON: Apollo Server validates, runs and remembers it.
    await overHttp(url(), MUTATION, t.stack.demoHeaders);
    expect(await deletes()).toHaveLength(1);
    await emulator.clearRequests();
    for (const contentType of ['text/plain;x=json', 'application/x-www-form-urlencoded;json', 'text/plain; charset=utf-8; x=application/json']) {
      const refused = await overHttp(url(), MUTATION, { ...t.stack.demoHeaders, 'content-type': contentType });
      expect(refused.status).toBe(400);
      expect(refused.body?.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
      expect(refused.body?.errors?.[0]?.message).toMatch(/Cross-Site Request Forgery/);
    }
    expect(await deletes()).toHaveLength(0);
  });

  it('lets a preflight header through, as Apollo Server does, and still refuses a non-JSON body', async () => {
    const withHeader = await overHttp(t.graphqlUrl, MUTATION, { ...t.stack.demoHeaders, 'content-type': 'text/plain', 'apollo-require-preflight': 'true' });
    expect(withHeader.status).toBe(400);
    expect(withHeader.body?.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    expect(await deletes()).toHaveLength(0);
  });

  it('refuses the same on SSE: a simple content type, or a GET without a preflight header', async () => {
    const simple = await fetch(t.graphqlUrl, { method: 'POST', headers: { ...t.stack.demoHeaders, accept: 'text/event-stream', 'content-type': 'text/plain;x=application/json' }, body: JSON.stringify(MUTATION) });
    expect(simple.status).toBe(400);
    const get = await fetch(`${t.graphqlUrl}?query=${encodeURIComponent('{ teapot }')}`, { headers: { ...t.stack.demoHeaders, accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    expect(await get.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    expect(await deletes()).toHaveLength(0);
  });
});
