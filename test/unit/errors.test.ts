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
    // A wait no client should honour is passed on as a day.
    expect(code(429, undefined, { retryAfter: '999999999' })).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 86_400 });
    expect(code(429, undefined, { retryAfter: 'Fri, 01 Jan 2100 00:00:00 GMT' })).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 86_400 });
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

  it('reads a validation body as BAD_USER_INPUT whatever generic status carries it', () => {
    const body = { code: '400', message: 'Validation failed', errors: [{ name: 'name', errors: ['is required'] }] };
    expect(code(500, body)).toMatchObject({ code: 'BAD_USER_INPUT', status: 500, fieldErrors: [{ field: 'name', messages: ['is required'] }] });
    expect(code(405, { code: 400, fields: [{ name: 'size', errors: ['must be a number'] }] })).toMatchObject({ code: 'BAD_USER_INPUT', status: 405 });
    // Without a message of its own, the field errors are the message.
    expect(errorForUpstream({ service: 'svc', status: 400, body: { fields: [{ name: 'name', errors: ['is required', 'is too short'] }] } })!.message).toBe('svc: name: is required, is too short');
  });

  it('maps a generic status by the `code` its body names, as a number or as text', () => {
    expect(code(500, { code: 401, message: 'bad token', fields: [] })).toMatchObject({ code: 'UNAUTHENTICATED', status: 500 });
    expect(code(500, { code: ' 429 ', message: 'quota' })).toMatchObject({ code: 'RATE_LIMITED' });
    expect(errorForUpstream({ service: 'svc', status: 500, body: { code: '404' }, lookup: true })).toBeNull();
    expect(code(500, { code: 'E_INTERNAL', message: 'boom' })).toMatchObject({ code: 'UPSTREAM_ERROR', status: 500 });
    expect(code(500, { code: 500 })).toMatchObject({ code: 'UPSTREAM_ERROR' });
  });

  it('reads a code with an internal sub-code after a dot, as the real dashboards service sends it', () => {
    expect(code(500, { code: '401.001', message: 'bad token', errors: null })).toMatchObject({ code: 'UNAUTHENTICATED', status: 500 });
    expect(code(500, { code: '429.002', message: 'quota' })).toMatchObject({ code: 'RATE_LIMITED' });
    expect(code(500, { code: '4010.1' })).toMatchObject({ code: 'UPSTREAM_ERROR' });
  });

  it('keeps a status that has a row of its own, whatever the body says', () => {
    expect(code(401, { code: 400, fields: [{ name: 'service-token', errors: ['is invalid'] }] })).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(code(409, { code: '400', fields: [{ name: 'slug', errors: ['is taken'] }] })).toMatchObject({ code: 'CONFLICT' });
    expect(code(400, { code: 401 })).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
