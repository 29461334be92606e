import { describe, expect, it } from 'vitest';
import { createRequestLog, type LoggedRequest } from '../../emulators/kit/emulator.ts';

const request = (path: string): LoggedRequest => ({ method: 'GET', path, query: {}, headers: [], status: 200, at: '2026-11-22T00:00:00.000Z' });

describe("the emulator's request log", () => {
  it('keeps the newest entries, oldest first, once full', () => {
    const log = createRequestLog(3);
    for (const path of ['/a', '/b']) log.add(request(path));
    expect(log.list().map((entry) => entry.path)).toEqual(['/a', '/b']);
    for (const path of ['/c', '/d', '/e']) log.add(request(path));
    expect(log.list().map((entry) => entry.path)).toEqual(['/c', '/d', '/e']);
    log.add(request('/f'));
    expect(log.list().map((entry) => entry.path)).toEqual(['/d', '/e', '/f']);
  });

  it('starts again empty when cleared', () => {
    const log = createRequestLog(2);
    for (const path of ['/a', '/b', '/c']) log.add(request(path));
    log.clear();
    expect(log.list()).toEqual([]);
    log.add(request('/d'));
    expect(log.list().map((entry) => entry.path)).toEqual(['/d']);
  });
});
