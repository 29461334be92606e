import { afterEach, describe, expect, it, vi } from 'vitest';
import { requireBinary } from '../support/binaries.ts';

describe('programs the tests start', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('are found on PATH', () => {
    expect(requireBinary('node', { PATH: process.env.PATH })).toBe(true);
  });

  it('when missing, skip with a notice on a developer’s machine', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(requireBinary('redis-server', { PATH: '/nonexistent' })).toBe(false);
    expect(requireBinary('redis-server', { PATH: '/nonexistent', CI: 'false' })).toBe(false);
    expect(warn).toHaveBeenCalledTimes(2);
    expect(String(warn.mock.calls[0]![0])).toMatch(/redis-server is not installed: SKIPPING.*\n.*apt-get install -y redis-server/);
  });

  it('are found by their path too', () => {
    expect(requireBinary(process.execPath, {})).toBe(true);
    expect(() => requireBinary('/nonexistent/chromium', { CI: '1' })).toThrow(/\/nonexistent\/chromium is not installed.*apt-get install -y chromium/);
  });

  it('when missing in CI, fail', () => {
    expect(() => requireBinary('chromium', { PATH: '/nonexistent', CI: 'true' })).toThrow(/chromium is not installed, and CI is set.*apt-get install -y chromium/);
  });
});
