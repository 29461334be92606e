import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestUrl } from '../../lib/http.ts';
import { createBoundedCache } from '../../lib/boundedCache.ts';

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
    for (let index = 0; index < 5_000; index += 1) expect(target(`/no-such-route-${index}`)?.pathname).toBe(`/no-such-route-${index}`);
    expect(target('/graphql')?.pathname).toBe('/graphql');
    // A target past the remembered length is parsed, not kept.
    const long = `/${'a'.repeat(300)}`;
    expect(target(long)?.pathname).toBe(long);
    expect(target(long)).not.toBe(target(long));
    const cache = createBoundedCache<number>(64);
    for (let index = 0; index < 5_000; index += 1) cache.set(String(index), index);
    expect(cache.size).toBe(64);
  });
});
