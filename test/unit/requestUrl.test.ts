import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestUrl } from '../../lib/http.ts';

const target = (url: string) => requestUrl({ url } as IncomingMessage);

describe('request targets', () => {
  it('parse a target without a query once, and one with a query every time', () => {
    expect(target('/graphql')?.pathname).toBe('/graphql');
    expect(target('/graphql')).toBe(target('/graphql'));
    const withQuery = target('/graphql?query=%7B__typename%7D');
    expect(withQuery?.searchParams.get('query')).toBe('{__typename}');
    expect(target('/graphql?query=%7B__typename%7D')).not.toBe(withQuery);
    expect(target('http://[bad')).toBeUndefined();
  });

  it('stay right however many distinct targets a client sends, the remembered ones bounded', () => {
    const graphql = target('/graphql');
    for (let index = 0; index < 5_000; index += 1) expect(target(`/no-such-route-${index}`)?.pathname).toBe(`/no-such-route-${index}`);
    // Pushed out by the 5,000 since: what is remembered is bounded (the last 64).
    expect(target('/graphql')).not.toBe(graphql);
    expect(target('/graphql')?.pathname).toBe('/graphql');
    const recent = target('/no-such-route-4999');
    expect(target('/no-such-route-4999')).toBe(recent);
    // A target past the remembered length is parsed, not kept.
    const long = `/${'a'.repeat(300)}`;
    expect(target(long)?.pathname).toBe(long);
    expect(target(long)).not.toBe(target(long));
  });
});
