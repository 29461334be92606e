import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAccessLog, type AccessEntry } from '../../gateway/accessLog.ts';
import { callerKey } from '../../gateway/rateLimit.ts';
import { ALL_CREDENTIAL_HEADERS } from '../../lib/services.ts';
import { capturedLogs, testLogger } from '../support/logs.ts';

const TOKEN = 'tok_access_log_unit_0123456789';

describe('the access log line', () => {
  it('holds the entry’s own fields only: whatever else the object passed carries stays out', async () => {
    const log = createAccessLog(testLogger('gateway').child({ component: 'access' }), true);
    const before = capturedLogs.length;
    const entry = { type: 'query', operation: 'One', documentHash: 'abc', durationMs: 1.234567, status: 200, errorCodes: [], path: 'pass-through', headers: { 'x-recognition-token': TOKEN }, token: TOKEN } as AccessEntry;
    log.record({ headers: { 'x-recognition-token': TOKEN } }, entry);
    await endOfTurn();
    const text = capturedLogs.slice(before).join('');
    expect(text).not.toContain(TOKEN);
    const { level, time, pid, hostname, ...line } = JSON.parse(text) as Record<string, unknown>;
    expect({ level, time: typeof time, pid: typeof pid, hostname: typeof hostname }).toEqual({ level: 30, time: 'number', pid: 'number', hostname: 'string' });
    expect(Object.keys(line)).toEqual(['name', 'component', 'type', 'operation', 'documentHash', 'durationMs', 'status', 'errorCodes', 'path', 'caller', 'msg']);
    expect(line).toMatchObject({ durationMs: 1.23, caller: callerKey({ 'x-recognition-token': TOKEN }, undefined)!.slice(0, 24), msg: 'operation' });
  });

  it('writes the lines of one turn of the event loop once it ends, every one, in order', async () => {
    const log = createAccessLog(testLogger('gateway').child({ component: 'access' }), true);
    const before = capturedLogs.length;
    const operations = Array.from({ length: 50 }, (_, index) => `Op${index}`);
    for (const operation of operations) log.record({ headers: {} }, { type: 'query', operation, durationMs: 1, status: 200, errorCodes: [], path: 'apollo' });
    await endOfTurn();
    log.record({ headers: {} }, { type: 'query', operation: 'Next', durationMs: 1, status: 200, errorCodes: [], path: 'apollo' });
    await endOfTurn();
    const written = capturedLogs.slice(before).map((line) => (JSON.parse(line) as { operation: string }).operation);
    expect(written).toEqual([...operations, 'Next']);
  });
});

/** Resolves after the event loop's check phase, where the access log writes what its turn recorded. */
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the caller key', () => {
  it('is the SHA-256 of each credential header’s name and value, as hashed part by part', () => {
    const headers = { 'x-recognition-token': TOKEN, 'x-marketplace-email': ['a@example.com', 'b@example.com'], accept: 'application/json' };
    const byParts = createHash('sha256');
    for (const name of ALL_CREDENTIAL_HEADERS) {
      const value = (headers as Record<string, unknown>)[name];
      if (value !== undefined) byParts.update(name).update('\u0000').update(String(value)).update('\u0000');
    }
    expect(callerKey(headers, undefined)).toBe(`c:${byParts.digest('base64url')}`);
    expect(callerKey({ accept: 'application/json' }, undefined)).toBeUndefined();
    expect(callerKey({ 'x-recognition-token': '' }, undefined)).toMatch(/^c:/);
    expect(callerKey(headers, { id: 'u1' } as never)).toBe('p:u1');
  });

  it('is remembered per connection only for the credentials it was computed from', () => {
    const connection = {};
    const first = { 'x-recognition-token': TOKEN };
    const second = { 'x-recognition-token': `${TOKEN}x` };
    const alone = (headers: Record<string, string>) => callerKey(headers, undefined);
    expect(callerKey(first, undefined, connection)).toBe(alone(first));
    // Another credential on the same keep-alive connection gets its own key, then the first its own again.
    expect(callerKey(second, undefined, connection)).toBe(alone(second));
    expect(callerKey(second, undefined, connection)).not.toBe(alone(first));
    expect(callerKey(first, undefined, connection)).toBe(alone(first));
    expect(callerKey({ ...first, 'x-marketplace-email': 'a@example.com' }, undefined, connection)).toBe(alone({ ...first, 'x-marketplace-email': 'a@example.com' }));
    expect(callerKey({ accept: 'application/json' }, undefined, connection)).toBeUndefined();
    expect(callerKey(first, { id: 'u1' } as never, connection)).toBe('p:u1');
  });
});
