import fc from 'fast-check';
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

  /** Every byte of a text percent-encoded, in the given hex case: what a strict echo may send. */
  const everyByte = (text: string, upper: boolean) => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).map((form) => (upper ? form.toUpperCase() : form)).join('');

  it('scrubs every echo of a secret: any case, percent-encoded however far, in base64 inside a longer text', () => {
    const secret = fc.string({ unit: fc.constantFrom('a', 'Z', '9', '-', '_', '.', '~', '+', ' ', '/', '=', '%', 'é', 'Ü', '€', '😀'), minLength: 6, maxLength: 64 });
    // Case is folded for ASCII letters, what credentials are made of.
    const asciiCase = (value: string, fold: (text: string) => string) => value.replace(/[A-Za-z]+/g, fold);
    const echo = fc.constantFrom<(value: string) => string>(
      (value) => value,
      (value) => asciiCase(value, (text) => text.toUpperCase()),
      (value) => asciiCase(value, (text) => text.toLowerCase()),
      (value) => encodeURIComponent(value),
      (value) => everyByte(value, true),
      (value) => everyByte(value, false),
      (value) => Buffer.from(`user:${value}`).toString('base64'),
      (value) => Buffer.from(`x${value}yz`).toString('base64url'),
    );
    fc.assert(
      fc.property(secret, echo, fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (value, form, before, after) => {
        // Base64 cores are searched only from 8 characters on, as documented.
        fc.pre(Buffer.byteLength(value) >= 9);
        const echoed = form(value);
        const out = scrub(`${before}<${echoed}>${after}`, [value]);
        expect(out).not.toContain(echoed);
        expect(out).toContain('[REDACTED]');
      }),
      { numRuns: 3000 },
    );
  });

  it('scrubs a secret of 900,000 characters without a pattern V8 refuses, and quickly', () => {
    // As a pattern, a credential of some 25,000 characters was "Regular expression too large": an
    // unexpected error whose message, logged, held the credential's base64.
    const secret = `Ab-${'x9Z'.repeat(300_000)}`;
    const started = performance.now();
    const out = scrub(`said ${secret} and ${secret.toUpperCase()} and ${Buffer.from(`u:${secret}`).toString('base64')} end`, [secret]);
    expect(out).toBe('said [REDACTED] and [REDACTED] and [REDACTED] end');
    // Generous: a pattern-per-character scrub took seconds here.
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
