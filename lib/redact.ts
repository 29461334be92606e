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


// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const HEX_PAIR = /^[0-9a-f]{2}$/i;

/**
 * A text as an upstream might have echoed it, reduced to compare: percent-escapes decoded, every
 * character as its UTF-8 bytes, ASCII letters in lower case, `+` as a space (a form's space); with
 * where each byte came from in the text. An echo may change case or encode more than
 * encodeURIComponent does (`-` as `%2D`): reduced, every such echo of a secret is the secret reduced.
 */
function reduced(text: string, decodeEscapes: boolean): { bytes: string; startOf(index: number): number; endOf(index: number): number } {
  // The usual text, ASCII with no escape, reduces in place: no map is needed.
  if ((!decodeEscapes || !text.includes('%')) && ASCII.test(text)) return { bytes: text.toLowerCase().replaceAll('+', ' '), startOf: (index) => index, endOf: (index) => index + 1 };
  let bytes = '';
  const starts: number[] = [];
  const ends: number[] = [];
  const push = (code: number, start: number, end: number) => {
    bytes += String.fromCharCode(code === 0x2b ? 0x20 : code >= 0x41 && code <= 0x5a ? code + 0x20 : code);
    starts.push(start);
    ends.push(end);
  };
  for (let index = 0; index < text.length; ) {
    const code = text.charCodeAt(index);
    if (decodeEscapes && code === 0x25 && HEX_PAIR.test(text.slice(index + 1, index + 3))) {
      push(parseInt(text.slice(index + 1, index + 3), 16), index, index + 3);
      index += 3;
    } else if (code < 0x80) {
      push(code, index, index + 1);
      index += 1;
    } else {
      const char = String.fromCodePoint(text.codePointAt(index)!);
      for (const byte of Buffer.from(char, 'utf8')) push(byte, index, index + char.length);
      index += char.length;
    }
  }
  return { bytes, startOf: (index) => starts[index]!, endOf: (index) => ends[index]! };
}

/** The text with the given ranges (sorted, apart) replaced by the mask. */
function masked(text: string, ranges: readonly (readonly [number, number])[]): string {
  let out = '';
  let at = 0;
  for (const [start, end] of ranges) {
    out += `${text.slice(at, start)}${REDACTED}`;
    at = end;
  }
  return `${out}${text.slice(at)}`;
}

/**
 * Every echo of the secret in any case or percent-encoding, as ranges of the text. The secret is
 * its own bytes (a `%` in it is a `%`); the text is searched with its escapes decoded, then as it
 * stands, where a secret holding `%` followed by two hex digits is echoed as sent.
 */
function echoesOf(text: string, secret: string): [number, number][] {
  const wanted = reduced(secret, false).bytes;
  const ranges: [number, number][] = [];
  for (const decodeEscapes of [true, false]) {
    const { bytes, startOf, endOf } = reduced(text, decodeEscapes);
    for (let found = bytes.indexOf(wanted); found !== -1; found = bytes.indexOf(wanted, found + wanted.length)) {
      ranges.push([startOf(found), endOf(found + wanted.length - 1)]);
    }
  }
  return ranges;
}

const isBase64Char = (code: number) => (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x2b || code === 0x2f || code === 0x5f || code === 0x2d;

/**
 * The secret inside base64 or base64url text. A secret inside a longer base64 text (`user:token`
 * in a Basic header) is encoded differently at each of the three byte offsets it can start at;
 * the characters that depend only on the secret (its cores) are searched for, and the up to 4
 * around them that mix in neighbouring bytes are masked with them, and any padding.
 */
function base64EchoesOf(text: string, secret: string): [number, number][] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores = new Set<string>();
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Drop the characters that mix in the bytes before (the first group when offset > 0) and after (a partial last group).
    const core = encoded.slice(offset === 0 ? 0 : 4, Math.floor((offset + bytes.length) / 3) * 4);
    // A core this short could match ordinary text; secrets that short are not scrubbed as base64.
    if (core.length >= 8) cores.add(core).add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  const ranges: [number, number][] = [];
  for (const core of cores) {
    for (let found = text.indexOf(core); found !== -1; found = text.indexOf(core, found + core.length)) {
      let start = found;
      while (start > found - 4 && start > 0 && isBase64Char(text.charCodeAt(start - 1))) start -= 1;
      let end = found + core.length;
      for (const limit = end + 4; end < limit && end < text.length && isBase64Char(text.charCodeAt(end)); ) end += 1;
      while (text.charCodeAt(end) === 0x3d) end += 1;
      ranges.push([start, end]);
    }
  }
  return ranges;
}

/** Overlapping or touching ranges made one, in order. */
function merged(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const range of ranges.sort((a, b) => a[0] - b[0])) {
    const last = out.at(-1);
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else out.push([...range]);
  }
  return out;
}

/**
 * Replaces every occurrence of the given secret values in a text: as sent, in any case, percent-
 * encoded however far (URL or form), or inside base64/base64url. Upstreams sometimes echo what they
 * were sent (a URL with the token, a header value); scrubbing by value catches what scrubbing by
 * name cannot. Searched as text, never as a pattern made from the secret: such a pattern costs
 * milliseconds to build per call, and V8 refuses one made from a long credential ("Regular
 * expression too large", with the pattern, so the secret, in its message).
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    // Short values would mask ordinary words; real credentials are longer.
    if (!secret || secret.length < 6) continue;
    const ranges = echoesOf(out, secret);
    if (ranges.length) out = masked(out, merged(ranges));
    const encoded = base64EchoesOf(out, secret);
    if (encoded.length) out = masked(out, merged(encoded));
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
