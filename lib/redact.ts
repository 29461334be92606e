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

/**
 * Replaces every occurrence of the given secret values in a text.
 * Upstreams sometimes echo what they were sent (a URL with the token, a header value);
 * scrubbing by value catches what scrubbing by name cannot.
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    // Short values would mask ordinary words; real credentials are longer.
    if (secret && secret.length >= 6) out = out.split(secret).join(REDACTED);
  }
  return out.replace(/(bearer\s+)[^\s"',]+/gi, `$1${REDACTED}`);
}
