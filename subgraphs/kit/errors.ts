import { GraphQLError } from 'graphql';
import { scrub, scrubDeep } from '../../lib/redact.ts';
import { ErrorCode, graphError, WriteOutcome, type FieldError } from '../../lib/errors.ts';

// The vocabulary is a contract between the gateway and the subgraphs, kept in lib/.
export { ErrorCode, graphError, type FieldError, type GraphErrorExtensions } from '../../lib/errors.ts';

/** Input refused before any upstream call; names the argument so a form can point at it. */
export function badUserInput(argument: string, message: string): GraphQLError {
  return graphError(`${argument}: ${message}`, { code: ErrorCode.BadUserInput, argument });
}

export function missingCredential(service: string, header: string): GraphQLError {
  return graphError(`${service} needs a credential: send the ${header} header`, { code: ErrorCode.Unauthenticated, service });
}

export interface UpstreamOutcome {
  service: string;
  status: number;
  /** The parsed JSON body, or undefined when empty or not JSON. */
  body: unknown;
  /** The Retry-After header, when the upstream sent one. */
  retryAfter?: string | null;
  /** The call was a lookup by id: 404 means "no such thing", not a failure. */
  lookup?: boolean;
  /**
   * The call followed a page token or URL the upstream handed out. The caller sent nothing of its
   * own there, so a refusal means the upstream no longer honours it.
   */
  cursor?: boolean;
  /** The caller's credentials, scrubbed from the upstream's words before they are cut short. */
  secrets?: Secrets;
  /**
   * The status whose row the outcome falls under, when the service states it in its body whatever
   * the HTTP status (the messaging service's `{status: "fail", code}`); `status` stays the HTTP one.
   * @default from `status` and the body
   */
  row?: number;
}

/** What an upstream answers to a page link it no longer honours (the marketplace's `next` URL lives 10 minutes). */
const CURSOR_REFUSED = new Set([400, 404, 410, 422]);

/** The most of an upstream's own words carried into one error message, and into each field error. */
export const MAX_UPSTREAM_MESSAGE = 500;
/** Field errors carried from one upstream answer; the rest are summed up in one more entry. */
const MAX_FIELD_ERRORS = 50;
const MAX_MESSAGES_PER_FIELD = 10;

/**
 * Scrubbed past the cut too: a credential that starts before the cut is masked whole, never cut in
 * half first (half a token would no longer be recognised).
 */
const SCRUB_MARGIN = 1024;

type Secrets = readonly (string | undefined)[];

/**
 * A text an upstream wrote, scrubbed of the caller's credentials and cut at `max` characters
 * (never inside a surrogate pair) with a mark that it was.
 */
export function upstreamText(text: string, secrets: Secrets = [], max = MAX_UPSTREAM_MESSAGE): string {
  const head = scrub(text.length > max ? text.slice(0, max + SCRUB_MARGIN) : text, secrets);
  if (head.length <= max) return head;
  const end = /[\uD800-\uDBFF]/.test(head[max - 1]!) ? max - 1 : max;
  return `${head.slice(0, end)}… (cut short: ${text.length} characters in all)`;
}

/** What the upstream said, from whichever error envelope it used, at most `MAX_UPSTREAM_MESSAGE` characters. */
function upstreamMessage(body: unknown, secrets: Secrets): string | undefined {
  const said = rawUpstreamMessage(body);
  return said === undefined ? undefined : upstreamText(said, secrets);
}

/** The text of one error object: its `message`, or JSON:API's `detail`, else its `title`. */
function errorObjectText(item: unknown): string | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const entry = item as Record<string, unknown>;
  const text = [entry.message, entry.detail, entry.title].find((value) => typeof value === 'string' && value !== '');
  return text === undefined ? undefined : String(text);
}

/** The field a JSON:API error object's `source` names: its query `parameter`, or the last segment of its JSON `pointer`. */
function sourceField(source: unknown): string | undefined {
  if (!source || typeof source !== 'object') return undefined;
  const { parameter, pointer } = source as Record<string, unknown>;
  if (typeof parameter === 'string' && parameter) return parameter;
  if (typeof pointer === 'string' && pointer.replace(/^\/+/, '')) return pointer.split('/').filter(Boolean).pop();
  return undefined;
}

function rawUpstreamMessage(body: unknown): string | undefined {
  if (typeof body === 'string' && body.trim()) return body.trim();
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  if (typeof record.message === 'string' && record.message) return record.message;
  if (typeof record.error === 'string' && record.error) return record.error;
  if (typeof record.error_description === 'string') return record.error_description;
  if (Array.isArray(record.errors)) {
    const texts = record.errors.slice(0, MAX_FIELD_ERRORS).map((item) => (typeof item === 'string' ? item : errorObjectText(item) ?? '')).filter(Boolean);
    if (texts.length) return texts.join('; ');
  }
  return undefined;
}

/**
 * Field errors from `{fields: [{name, errors}]}`, `{errors: [{name|field, errors|messages}]}`, or
 * JSON:API's `{errors: [{detail, source: {parameter|pointer}}]}`.
 */
export function fieldErrorsOf(body: unknown, secrets: Secrets = []): FieldError[] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  const list = Array.isArray(record.fields) ? record.fields : Array.isArray(record.errors) ? record.errors : undefined;
  if (!list) return undefined;
  const out: FieldError[] = [];
  let left = 0;
  for (const item of list) {
    if (!item || typeof item !== 'object') continue;
    const entry = item as Record<string, unknown>;
    const field = entry.name ?? entry.field ?? sourceField(entry.source);
    const messages = entry.errors ?? entry.messages ?? entry.message ?? errorObjectText(entry);
    if (typeof field !== 'string') continue;
    if (out.length === MAX_FIELD_ERRORS) {
      left += 1;
      continue;
    }
    const texts = (Array.isArray(messages) ? messages : [messages]).filter((m) => m !== undefined);
    out.push({ field: upstreamText(field, secrets, 200), messages: texts.slice(0, MAX_MESSAGES_PER_FIELD).map((message) => upstreamText(String(message), secrets)) });
  }
  if (left) out.push({ field: '…', messages: [`${left} more field errors`] });
  return out.length ? out : undefined;
}

/** Field errors as one readable line, for a validation body that carries no message of its own. */
function describeFieldErrors(fieldErrors: readonly FieldError[]): string {
  return upstreamText(fieldErrors.map(({ field, messages }) => `${field}: ${messages.join(', ')}`).join('; '));
}

/**
 * The HTTP status an error body names in its own `code`: a number, or its digits as text, with
 * any internal sub-code after a dot (the dashboards service's `"400.001"`).
 */
function declaredStatus(body: unknown): number | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const code = (body as Record<string, unknown>).code;
  const digits = typeof code === 'string' ? /^\s*(\d{3})(?:\.\d+)?\s*$/.exec(code)?.[1] : undefined;
  const value = typeof code === 'number' ? Math.trunc(code) : digits !== undefined ? Number(digits) : undefined;
  return value !== undefined && Number.isInteger(value) && value >= 400 && value <= 599 ? value : undefined;
}

/** Statuses with a row of their own in the table below; any other failure is UPSTREAM_ERROR unless its body says more. */
const STATUS_ROWS = new Set([400, 401, 403, 404, 409, 418, 422, 429, 449]);

/**
 * The row an outcome falls under. Some services answer every failure with one generic status and
 * say in the body what happened, so a status without a row of its own (5xx, 405...) is read
 * through the body: field errors mean the input was refused, and a `code` naming a status that has
 * a row is that row. A status with a row of its own always stands.
 */
function rowStatus(status: number, body: unknown, fieldErrors: FieldError[] | undefined): number {
  if (STATUS_ROWS.has(status)) return status;
  if (fieldErrors) return 400;
  const declared = declaredStatus(body);
  return declared !== undefined && STATUS_ROWS.has(declared) ? declared : status;
}

/** A day: a service asking a client to wait longer (`Retry-After: 999999999`) is passed on as this. */
const MAX_RETRY_AFTER_SECONDS = 86_400;

function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(MAX_RETRY_AFTER_SECONDS, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(0, Math.ceil((date - Date.now()) / 1000)));
}

/**
 * The one table from upstream outcomes to GraphQL errors. Returns null where the outcome
 * means "nothing there" (404 on a lookup), which the field reports as null without an error.
 */
export function errorForUpstream({ service, status, body, retryAfter, lookup, cursor, secrets = [], row: declaredRow }: UpstreamOutcome): GraphQLError | null {
  const said = upstreamMessage(body, secrets);
  const fieldErrors = fieldErrorsOf(body, secrets);
  const row = declaredRow ?? rowStatus(status, body, fieldErrors);
  // `status` stays the HTTP status the upstream answered, whichever row the outcome falls under.
  const base = { service, status };
  const message = (fallback: string) => `${service}: ${said ?? fallback}`;
  switch (true) {
    case cursor === true && CURSOR_REFUSED.has(status):
      return graphError(`${service}: this page is no longer available (${said ?? `HTTP ${status}`}); request the list again without \`after\``, { code: ErrorCode.CursorExpired, ...base });
    case row === 400 || row === 422:
      return graphError(message(fieldErrors ? describeFieldErrors(fieldErrors) : 'the request was refused as invalid'), {
        code: ErrorCode.BadUserInput,
        ...base,
        ...(fieldErrors ? { fieldErrors } : {}),
      });
    case row === 401:
      return graphError(message('the credential was refused'), { code: ErrorCode.Unauthenticated, ...base });
    case row === 403:
      return graphError(message('the credential may not do this'), { code: ErrorCode.Forbidden, ...base });
    case row === 404:
      return lookup ? null : graphError(message('not found'), { code: ErrorCode.NotFound, ...base });
    case row === 409:
      return graphError(message('conflict'), { code: ErrorCode.Conflict, ...base });
    case row === 418:
      return graphError(message("I'm a teapot"), { code: ErrorCode.Teapot, ...base });
    case row === 429: {
      const after = retryAfterSeconds(retryAfter);
      return graphError(message('rate limit reached'), { code: ErrorCode.RateLimited, ...base, ...(after !== undefined ? { retryAfterSeconds: after } : {}) });
    }
    case row === 449:
      // The service documents a five-minute wait and sends no Retry-After.
      return graphError(message('the data is not ready yet'), { code: ErrorCode.DataNotReady, ...base, retryAfterSeconds: 300 });
    default:
      return graphError(message(`answered HTTP ${status}`), { code: ErrorCode.UpstreamError, ...base });
  }
}

/**
 * The error with the given credentials scrubbed from every string it carries (message, field
 * errors, any extension), in every form `scrub` knows: an upstream may echo what it was sent.
 */
export function scrubError(error: GraphQLError, secrets: readonly (string | undefined)[]): GraphQLError {
  if (!secrets.some((secret) => secret && secret.length >= 6)) return error;
  return new GraphQLError(scrub(error.message, secrets), { extensions: scrubDeep({ ...error.extensions }, secrets), ...(error.originalError ? { originalError: error.originalError } : {}) });
}

/** The upstream answered 2xx with something its contract does not allow. */
export function upstreamContractError(service: string, message: string, status?: number): GraphQLError {
  return graphError(`${service}: ${message}`, { code: ErrorCode.UpstreamError, service, ...(status !== undefined ? { status } : {}) });
}

/**
 * A write the service applied, answering the new resource's id, whose read-back then failed. The
 * mutation cannot answer the resource (its fields are the read's), but sending it again would write
 * a second one: the error names the id, `writeOutcome: APPLIED` and `resourceId`, and says how to
 * read it instead. The read's code, status and other extensions stand, so a client's handling of
 * them is unchanged. `what` reads before the id: "the service started the import".
 */
export function appliedButUnread(service: string, what: string, id: string, cause: GraphQLError, follow: string): GraphQLError {
  const reason = cause.message.startsWith(`${service}: `) ? cause.message.slice(service.length + 2) : cause.message;
  return new GraphQLError(`${service}: ${what} ${id}, but reading it back failed (${reason}). Do not send the mutation again: ${follow}`, {
    extensions: { ...cause.extensions, service, writeOutcome: WriteOutcome.Applied, resourceId: id },
    originalError: cause,
  });
}
