import { describe, expect, it } from 'vitest';
import { errorForUpstream, fieldErrorsOf } from '../../subgraphs/kit/errors.ts';

const code = (status: number, body: unknown = undefined, extra: { lookup?: boolean; retryAfter?: string } = {}) =>
  errorForUpstream({ service: 'svc', status, body, ...extra })?.extensions;

describe('the error table', () => {
  it('maps each upstream status to its code', () => {
    expect(code(400)).toMatchObject({ code: 'BAD_USER_INPUT', status: 400, service: 'svc' });
    expect(code(422)).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(code(401)).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(code(403)).toMatchObject({ code: 'FORBIDDEN' });
    expect(code(404)).toMatchObject({ code: 'NOT_FOUND' });
    expect(code(409)).toMatchObject({ code: 'CONFLICT' });
    expect(code(418)).toMatchObject({ code: 'TEAPOT' });
    expect(code(429, undefined, { retryAfter: '30' })).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 30 });
    expect(code(449)).toMatchObject({ code: 'DATA_NOT_READY', retryAfterSeconds: 300 });
    expect(code(500)).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(code(503)).toMatchObject({ code: 'UPSTREAM_ERROR' });
  });

  it('reads a 404 on a lookup as "nothing there"', () => {
    expect(errorForUpstream({ service: 'svc', status: 404, body: undefined, lookup: true })).toBeNull();
  });

  it('takes the message from whichever envelope the upstream used', () => {
    expect(errorForUpstream({ service: 'svc', status: 400, body: { message: 'm' } })!.message).toBe('svc: m');
    expect(errorForUpstream({ service: 'svc', status: 401, body: { error: 'please log in' } })!.message).toBe('svc: please log in');
    expect(errorForUpstream({ service: 'svc', status: 404, body: { errors: ['no such question'] } })!.message).toBe('svc: no such question');
    expect(errorForUpstream({ service: 'svc', status: 500, body: undefined })!.message).toBe('svc: answered HTTP 500');
  });

  it('reads field errors from `fields` or `errors`', () => {
    expect(fieldErrorsOf({ code: 400, fields: [{ name: 'name', errors: ['required'] }] })).toEqual([{ field: 'name', messages: ['required'] }]);
    expect(fieldErrorsOf({ errors: [{ field: 'slug', messages: ['taken'] }] })).toEqual([{ field: 'slug', messages: ['taken'] }]);
    expect(fieldErrorsOf({ errors: ['plain'] })).toBeUndefined();
  });
});
