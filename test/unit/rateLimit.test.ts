import { describe, expect, it } from 'vitest';
import { callerKey, callerKeys, createRateLimiter } from '../../gateway/rateLimit.ts';

const TOKEN = 'tok_rate_limit_unit_0123456789';

describe("the rate limit's callers", () => {
  it('are each credential apart, never the email alone, a blank value none, a repeated header its first value', () => {
    const alone = callerKeys({ 'x-recognition-token': TOKEN }, undefined);
    expect(alone).toHaveLength(1);
    expect(alone[0]).toMatch(/^c:/);
    expect(alone[0]).not.toContain(TOKEN);
    // A header beside it adds a caller of its own and leaves the credential's key as it was.
    expect(callerKeys({ 'x-recognition-token': TOKEN, 'x-imports-apikey': 'junk-1' }, undefined)).toEqual([alone[0], expect.stringMatching(/^c:/)]);
    expect(callerKeys({ 'x-recognition-token': TOKEN, 'x-imports-apikey': 'junk-2' }, undefined)[0]).toBe(alone[0]);
    // The same value under another service's header is another credential.
    expect(callerKeys({ 'x-dashboards-token': TOKEN }, undefined)).not.toEqual(alone);
    expect(callerKeys({ 'x-marketplace-email': 'seller@example.com' }, undefined)).toEqual([]);
    expect(callerKeys({ 'x-marketplace-email': 'seller@example.com', 'x-marketplace-api-key': 'k' }, undefined)).toHaveLength(1);
    expect(callerKeys({ 'x-recognition-token': '' }, undefined)).toEqual([]);
    expect(callerKeys({ 'x-recognition-token': [TOKEN, 'junk'] }, undefined)).toEqual(alone);
    expect(callerKeys({ 'x-recognition-token': TOKEN }, { id: 'u1' } as never)).toEqual(['p:u1']);
  });

  it('are remembered per connection only for the credentials they were computed from, beside the access log key', () => {
    const connection = {};
    const first = { 'x-recognition-token': TOKEN };
    const second = { 'x-recognition-token': TOKEN, 'x-imports-apikey': 'junk' };
    expect(callerKeys(first, undefined, connection)).toEqual(callerKeys(first, undefined));
    expect(callerKey(first, undefined, connection)).toBe(callerKey(first, undefined));
    expect(callerKeys(second, undefined, connection)).toEqual(callerKeys(second, undefined));
    expect(callerKey(second, undefined, connection)).toBe(callerKey(second, undefined));
    expect(callerKeys(first, undefined, connection)).toEqual(callerKeys(first, undefined));
    expect(callerKeys({}, undefined, connection)).toEqual([]);
  });
});

describe('the caller limit in one process', () => {
  it('lets a request through only when every credential it carries has a token, and takes from none when one has not', async () => {
    let clock = 0;
    const limiter = createRateLimiter({ caller: { perSecond: 1, burst: 2 }, address: { perSecond: 0, burst: 1 } }, () => clock);
    const check = (headers: Record<string, string>) => limiter.check(headers, undefined, undefined);
    const recognition = { 'x-recognition-token': TOKEN };
    const both = { ...recognition, 'x-imports-apikey': 'imports-key' };
    expect(await check(recognition)).toEqual({ allowed: true });
    expect(await check(recognition)).toEqual({ allowed: true });
    for (let index = 0; index < 5; index += 1) expect(await check({ ...recognition, 'x-imports-apikey': `junk-${index}` })).toMatchObject({ allowed: false, scope: 'caller', retryAfterSeconds: 1 });
    // The refusals spent nothing of the imports key's bucket.
    expect(await check({ 'x-imports-apikey': 'imports-key' })).toEqual({ allowed: true });
    expect(await check(both)).toMatchObject({ allowed: false });
    clock += 1000;
    expect(await check(both)).toEqual({ allowed: true });
    // Burst 2, one taken alone, one with both, one refilled: had the refusal of both spent one, none would be left.
    expect(await check({ 'x-imports-apikey': 'imports-key' })).toEqual({ allowed: true });
    expect(await check({ 'x-imports-apikey': 'imports-key' })).toMatchObject({ allowed: false });
    await limiter.close();
  });
});
