import { createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '../../lib/errors.ts';
import { badUserInput, graphError } from './errors.ts';

/**
 * Cursors are opaque to clients: base64url of a small versioned JSON. They carry positions and
 * filters, never a credential, and are validated on the way in. Cursors that hold only a position
 * a client could as well ask for (an offset, an event log position) stay unsigned, so they outlive
 * a restart whatever the key; cursors that hold an upstream token are signed (`makeCursorSigner`).
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

/** Signs and opens cursors that carry what a client must not choose (an upstream's page token or URL). */
export interface CursorSigner {
  sign(kind: string, payload: Record<string, unknown>): string;
  /** The payload of a cursor this deployment signed for this list, or BAD_USER_INPUT naming the argument. */
  open<T extends Record<string, unknown>>(cursor: string, kind: string, argument?: string): T;
}

/** 128 bits of HMAC-SHA256: a forgery needs the key. */
const MAC_LENGTH = 22;

/**
 * Cursors signed with HMAC-SHA256 under a per-deployment key: `<base64url JSON>.<mac>`. A client
 * can read its cursor but not change it, so an upstream token inside (the marketplace's `next` URL
 * with its filters and page size) goes back upstream exactly as the upstream handed it out. Every
 * replica that may receive a cursor must share the secret (`CURSOR_SECRET`).
 *
 * The signed JSON names its key by a fingerprint (`i`, 48 bits of an HMAC: nothing to guess the key
 * from), so a cursor signed under another key, by a replica with another `CURSOR_SECRET` or before
 * a restart that drew a random one, is told apart from a forgery: `CURSOR_EXPIRED` (start the list
 * again), and `onForeignKey` tells the operator that replicas disagree.
 */
export function makeCursorSigner(secret: string, { onForeignKey }: { onForeignKey?: () => void } = {}): CursorSigner {
  const mac = (body: string) => createHmac('sha256', secret).update(body).digest('base64url').slice(0, MAC_LENGTH);
  const keyId = createHmac('sha256', secret).update('cursor key fingerprint').digest('base64url').slice(0, 8);
  return {
    sign(kind, payload) {
      const body = encodeCursor(kind, { ...payload, i: keyId });
      return `${body}.${mac(body)}`;
    },
    open<T extends Record<string, unknown>>(cursor: string, kind: string, argument = 'after'): T {
      const dot = cursor.lastIndexOf('.');
      const body = cursor.slice(0, Math.max(dot, 0));
      const given = Buffer.from(cursor.slice(dot + 1));
      const expected = Buffer.from(mac(body));
      if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        let signedBy: unknown;
        try {
          signedBy = dot > 0 ? decodeCursor<{ i?: unknown }>(body, kind, argument).i : undefined;
        } catch {
          // Not even a cursor of this list: refused below as any other.
        }
        if (typeof signedBy === 'string' && signedBy !== keyId) {
          onForeignKey?.();
          throw graphError(`${argument}: this cursor was signed under another CURSOR_SECRET (by a replica configured with a different one, or before a restart that drew a random one); request the list again without \`${argument}\``, {
            code: ErrorCode.CursorExpired,
            argument,
          });
        }
        throw badUserInput(argument, 'is not a cursor this graph issued, or it was changed');
      }
      return decodeCursor<T>(body, kind, argument);
    },
  };
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
