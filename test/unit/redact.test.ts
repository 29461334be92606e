import { describe, expect, it } from 'vitest';
import { redactHeaders, redactUrl, scrub } from '../../lib/redact.ts';

describe('redaction', () => {
  it('masks credential query values and userinfo in URLs', () => {
    expect(redactUrl('https://u:p@api.example/v1/x?access_token=abc123&page=2&apikey=zz')).toBe(
      'https://%5BREDACTED%5D@api.example/v1/x?access_token=%5BREDACTED%5D&page=2&apikey=%5BREDACTED%5D',
    );
    expect(redactUrl('/api/v1/rewards?access_token=abcdef&request_country=US')).toBe('/api/v1/rewards?access_token=%5BREDACTED%5D&request_country=US');
  });

  it('masks credential headers by name, in any case', () => {
    expect(redactHeaders({ Authorization: 'Bearer x', 'X-Api-Key': 'k', 'x-accountmanager-key': 'm', accept: 'application/json' })).toEqual({
      authorization: '[REDACTED]',
      'x-api-key': '[REDACTED]',
      'x-accountmanager-key': '[REDACTED]',
      accept: 'application/json',
    });
  });

  it('scrubs known secret values and bearer tokens from free text', () => {
    expect(scrub('upstream said token=s3cr3t-value was bad; Authorization: Bearer abc.def', ['s3cr3t-value'])).toBe(
      'upstream said token=[REDACTED] was bad; Authorization: Bearer [REDACTED]',
    );
    // Short values would mask ordinary words.
    expect(scrub('a b c', ['a'])).toBe('a b c');
  });
});
