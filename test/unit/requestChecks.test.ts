import { describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import { blockedAsCsrf, illFormedStringPath, illFormedVariablesMessage, isJsonContentType, mediaTypeEssence } from '../../lib/requestChecks.ts';
import { makeTrustedProxies } from '../../lib/trustedProxies.ts';
import { withoutSuggestions } from '../../lib/errorFormatting.ts';
import { createCredentialChecks } from '../../subgraphs/kit/credentialChecks.ts';

describe('request checks as Apollo Server makes them', () => {
  it('reads a media type’s essence, parameters and case aside', () => {
    expect(mediaTypeEssence('text/plain;x=json')).toBe('text/plain');
    expect(mediaTypeEssence(' Application/JSON ; charset=utf-8')).toBe('application/json');
    expect(mediaTypeEssence('json')).toBeUndefined();
    expect(isJsonContentType('application/x-www-form-urlencoded;json')).toBe(false);
    expect(isJsonContentType('application/json; charset=utf-8')).toBe(true);
  });

  it('blocks what a browser may send cross-site without a preflight, unless a preflight header is set', () => {
    expect(blockedAsCsrf({})).toBe(true);
    expect(blockedAsCsrf({ 'content-type': 'text/plain;x=json' })).toBe(true);
    expect(blockedAsCsrf({ 'content-type': 'multipart/form-data; boundary=x' })).toBe(true);
    expect(blockedAsCsrf({ 'content-type': 'text/plain', 'apollo-require-preflight': 'yes' })).toBe(false);
    expect(blockedAsCsrf({ 'content-type': 'text/plain', 'x-apollo-operation-name': '' })).toBe(true);
    expect(blockedAsCsrf({ 'content-type': 'application/json' })).toBe(false);
    // Not a type a browser sends unasked: Apollo lets it through, and so do we.
    expect(blockedAsCsrf({ 'content-type': 'not a type' })).toBe(false);
  });

  it('finds a lone surrogate anywhere in variables, nested deep without recursion', () => {
    expect(illFormedStringPath({ a: ['ok', { b: 'x\ud800' }] })).toBe('a.1.b');
    expect(illFormedStringPath({ '\udc00': 1 })).toBe('\udc00');
    expect(illFormedStringPath({ emoji: '😀' })).toBeUndefined();
    let deep: unknown = '\ud800';
    for (let level = 0; level < 100_000; level += 1) deep = [deep];
    expect(illFormedStringPath(deep)).toMatch(/^0(\.0)*$/);
    expect(illFormedVariablesMessage({ id: 'rd_\ud800' })).toMatch(/^Variable "\$id" got invalid value; strings must be well-formed Unicode/);
    expect(illFormedVariablesMessage({ id: 'rd_001' })).toBeUndefined();
  });

  it('drops graphql-js suggestions from a message', () => {
    expect(withoutSuggestions({ message: 'Cannot query field "x" on type "Query". Did you mean "y" or "z"?' }).message).toBe('Cannot query field "x" on type "Query".');
    expect(withoutSuggestions({ message: 'Variable "$d" got invalid value "GIVN"; Value "GIVN" does not exist in "Dir" enum. Did you mean the enum value "GIVEN"?' }).message).toBe(
      'Variable "$d" got invalid value "GIVN"; Value "GIVN" does not exist in "Dir" enum.',
    );
  });
});

describe('trusted proxies', () => {
  it('matches addresses and CIDR ranges of both families, IPv4-mapped IPv6 included', () => {
    const proxies = makeTrustedProxies(['10.0.0.0/8', '::1', '192.168.1.7']);
    expect(proxies.trusts('10.1.2.3')).toBe(true);
    expect(proxies.trusts('::ffff:10.1.2.3')).toBe(true);
    expect(proxies.trusts('::1')).toBe(true);
    expect(proxies.trusts('192.168.1.8')).toBe(false);
    expect(proxies.trusts(undefined)).toBe(false);
    expect(makeTrustedProxies([]).trusts('127.0.0.1')).toBe(false);
  });

  it('names the variable when an entry is not an address or range', () => {
    for (const entry of ['10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/1', '::1/129']) expect(() => makeTrustedProxies([entry])).toThrow(/TRUSTED_PROXIES/);
  });
});

describe('credential checks', () => {
  const refused = () => new GraphQLError('no', { extensions: { code: 'UNAUTHENTICATED' } });

  it('asks once per credential within the time to live, verdicts included, and never answers for another credential', async () => {
    let now = 0;
    const checks = createCredentialChecks({ ttlMs: 1000, now: () => now });
    const calls: string[] = [];
    const verify = (credential: string, ok: boolean) => () => {
      calls.push(credential);
      return ok ? Promise.resolve() : Promise.reject(refused());
    };
    await Promise.all([checks.check('good', verify('good', true)), checks.check('good', verify('good', true))]);
    await expect(checks.check('bad', verify('bad', false))).rejects.toThrow('no');
    await expect(checks.check('bad', verify('bad', false))).rejects.toThrow('no');
    await expect(checks.check('goo', verify('goo', false))).rejects.toThrow('no');
    expect(calls).toEqual(['good', 'bad', 'goo']);
    now = 1000;
    await checks.check('good', verify('good', true));
    expect(calls).toEqual(['good', 'bad', 'goo', 'good']);
  });

  it('forgets a passing failure at once', async () => {
    const checks = createCredentialChecks({ ttlMs: 60_000, now: () => 0 });
    let calls = 0;
    const flaky = () => {
      calls += 1;
      return calls === 1 ? Promise.reject(new GraphQLError('down', { extensions: { code: 'UPSTREAM_UNAVAILABLE' } })) : Promise.resolve();
    };
    await expect(checks.check('token', flaky)).rejects.toThrow('down');
    await checks.check('token', flaky);
    expect(calls).toBe(2);
  });
});
