import { describe, expect, it } from 'vitest';
import { errorForUpstream } from '../../subgraphs/kit/errors.ts';
import { readAdminError } from '../../subgraphs/gatewayAdmin/client.ts';

const read = (status: number, body: unknown) => errorForUpstream({ service: 'gatewayAdmin', status, body: readAdminError(body) });

describe('the admin interface’s error bodies, as the error table reads them', () => {
  it('0.x flat bodies: one message per field, or a list of them', () => {
    expect(read(400, { upstream_url: 'upstream_url is required', name: ['name is required', 'too short'] })?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      fieldErrors: [
        { field: 'upstream_url', messages: ['upstream_url is required'] },
        { field: 'name', messages: ['name is required', 'too short'] },
      ],
    });
    const conflict = read(409, { name: "already exists with value 'billing'" });
    expect(conflict?.extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(conflict?.message).toBe("gatewayAdmin: name: already exists with value 'billing'");
  });

  it('an entity message alone, and the structured bodies of later releases, whose `code` is not an HTTP status', () => {
    expect(read(400, { message: "at least one of 'hosts', 'uris' or 'methods' must be specified" })?.message).toBe("gatewayAdmin: at least one of 'hosts', 'uris' or 'methods' must be specified");
    const structured = read(400, { code: 2, name: 'schema violation', message: 'schema violation (name: required field missing)', fields: { name: 'required field missing', '@entity': ['x'] } });
    expect(structured?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', status: 400, fieldErrors: [{ field: 'name', messages: ['required field missing'] }] });
    expect(read(404, { message: 'Not found' })?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    // A text body passes as it came.
    expect(readAdminError('Bad Gateway')).toBe('Bad Gateway');
  });
});
