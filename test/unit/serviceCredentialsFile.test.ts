import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCredentialStore } from '../../gateway/auth/serviceCredentials.ts';
import { ConfigError } from '../../lib/config.ts';

describe('AUTH_CREDENTIALS_FILE', () => {
  const folder = mkdtempSync(join(tmpdir(), 'credentials-'));

  it('says a file it cannot read cannot be read, and a file of the wrong shape what shape it wants, never a value from it', () => {
    const missing = join(folder, 'missing.json');
    expect(() => createCredentialStore({ file: missing })).toThrow(new ConfigError(`AUTH_CREDENTIALS_FILE (${missing}) cannot be read: ENOENT.`));
    const wrong = join(folder, 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ principals: { partner: { 'x-recognition-token': 987_654_321 } }, secret: 'kept-in-the-file' }));
    expect(() => createCredentialStore({ file: wrong })).toThrow(/must be JSON like/);
    expect(() => createCredentialStore({ file: wrong })).not.toThrow(/kept-in-the-file|987654321/);
  });
});
