/**
 * The checks Apollo Server makes on a request before it runs anything, for the paths that answer
 * without it (the gateway's pass-through, a subgraph's compiled repeats, the SSE transport): a
 * fast path must refuse exactly what Apollo would refuse.
 */

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Apollo's default `csrfPrevention.requestHeaders`: any non-empty one proves the browser sent a preflight. */
export const CSRF_PREFLIGHT_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight'] as const;

/** Content types a browser sends cross-site without a preflight (the CORS "simple" types). */
const SIMPLE_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * A media type's essence (`type/subtype`, lower case, parameters dropped) as the WHATWG MIME
 * parser reads it; undefined when it does not parse. `text/plain;x=json` is `text/plain`.
 */
export function mediaTypeEssence(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  // What nearly every GraphQL request sends, read three times a request: no split, trim or tests.
  if (contentType === 'application/json') return contentType;
  const essence = contentType.split(';', 1)[0]!.trim().toLowerCase();
  const slash = essence.indexOf('/');
  if (slash <= 0 || slash === essence.length - 1) return undefined;
  return TOKEN.test(essence.slice(0, slash)) && TOKEN.test(essence.slice(slash + 1)) ? essence : undefined;
}

/** Whether a request body of this type is JSON Apollo Server would read: `application/json`, whatever its parameters. */
export function isJsonContentType(contentType: string | undefined): boolean {
  return mediaTypeEssence(contentType) === 'application/json';
}

/**
 * Apollo Server's CSRF prevention: a request a browser could send cross-site without a preflight
 * (no content type, or a simple one, and none of the preflight headers) is refused before it runs.
 * A content type that does not parse is not one a browser sends unasked, so Apollo lets it pass.
 */
export function blockedAsCsrf(headers: RequestHeaders): boolean {
  const contentType = first(headers['content-type']);
  if (contentType !== undefined) {
    const essence = mediaTypeEssence(contentType);
    if (essence === undefined || !SIMPLE_CONTENT_TYPES.has(essence)) return false;
  }
  return !CSRF_PREFLIGHT_HEADERS.some((name) => (first(headers[name]) ?? '').length > 0);
}

/** Apollo Server's words for a request it blocks as a possible CSRF. */
export const CSRF_MESSAGE =
  "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header (with a type that is not one of application/x-www-form-urlencoded, multipart/form-data, text/plain) or provide a non-empty value for one of the following headers: x-apollo-operation-name, apollo-require-preflight";

/** A string with a lone surrogate: JavaScript holds it, UTF-8 cannot encode it. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Where the first string that is not well-formed Unicode sits in a JSON value (`ids.3`, or `` for
 * the value itself), or undefined when there is none. A lone surrogate arrives only through a JSON
 * `\ud800` escape, can never be sent on as UTF-8, and so is refused as the caller's input. Walked
 * without recursion: the value may be nested as deep as its body allowed.
 */
export function illFormedStringPath(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return path;
    } else if (current && typeof current === 'object') {
      for (const [key, inner] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return path ? `${path}.${key}` : key;
        stack.push({ value: inner, path: path ? `${path}.${key}` : key });
      }
    }
  }
  return undefined;
}

/**
 * The error for variables holding a string that is not well-formed Unicode, worded as graphql-js
 * words a variable's bad value; undefined when every variable is well formed.
 */
export function illFormedVariablesMessage(variables: unknown): string | undefined {
  if (!variables || typeof variables !== 'object') return undefined;
  for (const [name, value] of Object.entries(variables)) {
    const path = LONE_SURROGATE.test(name) ? '' : illFormedStringPath(value);
    if (path !== undefined) {
      const where = path ? ` at "${name}.${path}"` : '';
      return `Variable "$${name.replace(LONE_SURROGATE, '\uFFFD')}" got invalid value${where}; strings must be well-formed Unicode (a lone surrogate cannot be encoded in UTF-8)`;
    }
  }
  return undefined;
}
