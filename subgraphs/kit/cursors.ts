import { badUserInput } from './errors.ts';

/**
 * Cursors are opaque to clients: base64url of a small versioned JSON. They carry positions and
 * filters, never a credential, and are validated on the way in.
 */
const VERSION = 1;

export function encodeCursor(kind: string, payload: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: VERSION, k: kind, ...payload })).toString('base64url');
}

/** Decodes a cursor of the given kind, or throws BAD_USER_INPUT naming the argument. */
export function decodeCursor<T extends Record<string, unknown>>(cursor: string, kind: string, argument = 'after'): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badUserInput(argument, 'is not a cursor this graph issued');
  }
  if (!parsed || typeof parsed !== 'object' || (parsed as { v?: unknown }).v !== VERSION || (parsed as { k?: unknown }).k !== kind) {
    throw badUserInput(argument, 'is not a cursor this graph issued for this list');
  }
  return parsed as T;
}

/**
 * Whether an upstream's page token or URL holds one of the caller's credentials, plain,
 * percent-encoded or inside a base64 segment. Only a token that holds none may travel in a cursor.
 */
export function holdsCredential(token: string, secrets: readonly (string | undefined)[]): boolean {
  const forms = [token];
  try {
    forms.push(decodeURIComponent(token));
  } catch {
    // A malformed escape is still searched in its raw form.
  }
  for (const part of token.split(/[^A-Za-z0-9+/=_-]+/)) {
    if (part.length >= 8) forms.push(Buffer.from(part, 'base64').toString('latin1'));
  }
  return secrets.some((secret) => secret !== undefined && secret.length >= 6 && forms.some((form) => form.includes(secret)));
}
