/**
 * Credentials must never reach a log line, an error message, a trace or a cursor.
 * Everything that turns a request into text goes through these functions.
 */

export const REDACTED = '[REDACTED]';

/** Query parameters and header names whose values are credentials, compared in lower case. */
const SECRET_NAME = /(token|secret|password|passwd|api[-_]?key|apikey|authorization|cookie|signature|account[-_]?key|accountmanager|credential)/i;

function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Masks the values of credential-like query parameters; keeps the rest readable. */
export function redactQuery(search: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of search) {
    out[name] = isSecretName(name) ? REDACTED : value;
  }
  return out;
}

/** A URL with credential-like query values and any userinfo masked. */
export function redactUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input, 'http://relative.invalid');
  } catch {
    return REDACTED;
  }
  if (url.username || url.password) {
    url.username = REDACTED;
    url.password = '';
  }
  for (const name of [...url.searchParams.keys()]) {
    if (isSecretName(name)) url.searchParams.set(name, REDACTED);
  }
  const text = url.toString();
  return input.startsWith('/') ? text.replace('http://relative.invalid', '') : text;
}

/** Header names only, or name -> value with credential values masked. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = isSecretName(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const BASE64_CHAR = '[A-Za-z0-9+/_-]';
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The text forms a secret can be echoed in: as sent, percent-encoded (URL or form), and inside
 * base64 or base64url. A secret inside a longer base64 text (`user:token` in a Basic header) is
 * encoded differently at each of the three byte offsets it can start at; the characters that
 * depend only on the secret are searched for, and the up to 4 around them that mix in neighbouring
 * bytes are masked with them. Built at each call, not cached: a cache would keep credentials.
 */
function formsOf(secret: string): { plain: string[]; encoded: RegExp | undefined } {
  const percent = encodeURIComponent(secret);
  const plain = [...new Set([secret, percent, percent.replace(/%20/g, '+')])].sort((a, b) => b.length - a.length);
  const cores: string[] = [];
  const bytes = Buffer.from(secret, 'utf8');
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Drop the characters that mix in the bytes before (the first group when offset > 0) and after (a partial last group).
    const from = offset === 0 ? 0 : 4;
    const to = Math.floor((offset + bytes.length) / 3) * 4;
    const core = encoded.slice(from, to);
    // A core this short could match ordinary text; secrets that short are not scrubbed as base64.
    if (core.length >= 8) cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  const encoded = cores.length ? new RegExp(`${BASE64_CHAR}{0,4}(?:${[...new Set(cores)].map(escapeRegExp).join('|')})${BASE64_CHAR}{0,4}=*`, 'g') : undefined;
  return { plain, encoded };
}

/**
 * Replaces every occurrence of the given secret values in a text, plain, percent-encoded or in
 * base64/base64url. Upstreams sometimes echo what they were sent (a URL with the token, a header
 * value); scrubbing by value catches what scrubbing by name cannot.
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    // Short values would mask ordinary words; real credentials are longer.
    if (!secret || secret.length < 6) continue;
    const { plain, encoded } = formsOf(secret);
    for (const form of plain) if (out.includes(form)) out = out.split(form).join(REDACTED);
    if (encoded) out = out.replace(encoded, REDACTED);
  }
  return out.replace(/(bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`);
}

/** Every string in a JSON-like value scrubbed as `scrub` does, keys included; other values kept. */
export function scrubDeep<T>(value: T, secrets: readonly (string | undefined)[], depth = 0): T {
  if (typeof value === 'string') return scrub(value, secrets) as T;
  // Error extensions are shallow; a deeper value is dropped rather than walked without end.
  if (!value || typeof value !== 'object') return value;
  if (depth > 8) return REDACTED as T;
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, secrets, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [scrub(key, secrets), scrubDeep(item, secrets, depth + 1)])) as T;
}
