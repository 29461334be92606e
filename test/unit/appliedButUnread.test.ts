import { describe, expect, it } from 'vitest';
import { appliedButUnread, ErrorCode, graphError } from '../../subgraphs/kit/errors.ts';

describe('appliedButUnread', () => {
  it('keeps the read’s code, status and other extensions, and adds the outcome and the id', () => {
    const cause = graphError('imports: rate limit reached', { code: ErrorCode.RateLimited, service: 'imports', status: 429, retryAfterSeconds: 7 });
    const error = appliedButUnread('imports', 'the service started the import', 'imp_0007', cause, 'read it with import(id: "imp_0007").');
    expect(error.extensions).toEqual({ code: 'RATE_LIMITED', service: 'imports', status: 429, retryAfterSeconds: 7, writeOutcome: 'APPLIED', resourceId: 'imp_0007' });
    expect(error.message).toBe('imports: the service started the import imp_0007, but reading it back failed (rate limit reached). Do not send the mutation again: read it with import(id: "imp_0007").');
    expect(error.originalError).toBe(cause);
  });

  it('quotes a cause worded by another service whole, and names the service it was given', () => {
    const cause = graphError('marketplace is unavailable: no answer within 400 ms', { code: ErrorCode.UpstreamUnavailable, service: 'marketplace' });
    const error = appliedButUnread('marketplace', 'the service created the label group', '7003', cause, 'read it with labelGroup(id: "7003").');
    expect(error.message).toContain('(marketplace is unavailable: no answer within 400 ms)');
    expect(error.extensions).toEqual({ code: 'UPSTREAM_UNAVAILABLE', service: 'marketplace', writeOutcome: 'APPLIED', resourceId: '7003' });
  });
});
