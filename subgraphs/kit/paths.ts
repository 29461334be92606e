import { badUserInput } from './errors.ts';

/**
 * Upstream paths built from callers' values. Every client builds every path that holds a value
 * through `restPath`, so none can forget: `encodeURIComponent` leaves `.` alone, and a segment of
 * `.` or `..` (or an empty one) would change which endpoint is called (`reward(id: "..")` would be
 * `GET /api/v1/`). Such values are refused, naming the argument, before any call; every other value
 * is percent-encoded into exactly one segment.
 */

/** The `:name` placeholders of a path template, as a union of their names. */
export type PathParams<Template extends string> = Template extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : Template extends `${string}:${infer Name}`
    ? Name
    : never;

/** Values that are not one ordinary segment: resolving the path would drop or climb a segment. */
const MOVES_THE_PATH = new Set(['', '.', '..']);

/**
 * Longer than any id, slug, SKU or name these services use: a longer value can only be a mistake
 * or a probe, and sent it comes back as the upstream's 414 or 431, blamed on the service.
 */
export const MAX_SEGMENT_CHARS = 512;

/**
 * The value, if it can stand as one path segment; else BAD_USER_INPUT naming the argument. For a
 * resolver that checks an argument before a loader takes it (a refusal then names `slug`, not `id`).
 */
export function singleSegment(value: string, argument: string): string {
  if (MOVES_THE_PATH.has(value.trim())) throw badUserInput(argument, `must name one resource; got ${JSON.stringify(value)}`);
  if (value.length > MAX_SEGMENT_CHARS) throw badUserInput(argument, `must be at most ${MAX_SEGMENT_CHARS} characters; got ${value.length}`);
  return value;
}

/** One caller's value as one percent-encoded path segment, or BAD_USER_INPUT naming the argument it came from. */
export function pathSegment(value: string, argument: string): string {
  return encodeURIComponent(singleSegment(value, argument));
}

type Part = { text: string } | { param: string };
const compiled = new Map<string, Part[]>();

function partsOf(template: string): Part[] {
  let parts = compiled.get(template);
  if (!parts) {
    parts = template.split(/(:[A-Za-z_][A-Za-z0-9_]*)/).map((part) => (part.startsWith(':') ? { param: part.slice(1) } : { text: part }));
    compiled.set(template, parts);
  }
  return parts;
}

/**
 * A path below the service's base URL from a template such as `/dashboards/:dashboardId/widgets/:id`
 * (the spec's own notation). Each `:name` is filled with `params[name]` as one encoded segment; the
 * name is the GraphQL argument the value came from, so a refusal points at it.
 */
export function restPath<Template extends string>(template: Template, params: Record<PathParams<Template>, string>): string {
  let path = '';
  for (const part of partsOf(template)) path += 'text' in part ? part.text : pathSegment((params as Record<string, string>)[part.param]!, part.param);
  return path;
}

/** A segment that resolves as `.` or `..`, literally or percent-encoded (`%2e`), as RFC 3986 and WHATWG URL resolve them. */
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/**
 * Whether a path (query left out) holds a dot segment. The transport refuses such a path whatever
 * built it: the last guard should a client ever build one without `restPath`.
 */
export function hasDotSegment(path: string): boolean {
  const query = path.indexOf('?');
  return DOT_SEGMENT.test(query === -1 ? path : path.slice(0, query));
}

/** Each template `restPath` has built a path from, as a pattern that matches such paths. */
const templatePatterns = new Map<string, { pattern: RegExp; literal: number }>();

function patternOf(template: string) {
  let entry = templatePatterns.get(template);
  if (!entry) {
    const parts = partsOf(template);
    const source = parts.map((part) => ('text' in part ? part.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : '[^/]+')).join('');
    // A path made by appending to a built one (`${shipments}view`) keeps its template as a prefix.
    entry = { pattern: new RegExp(`^${source}`), literal: parts.reduce((length, part) => length + ('text' in part ? part.text.length : 0), 0) };
    templatePatterns.set(template, entry);
  }
  return entry;
}

/**
 * The template a path was built from, in the OpenTelemetry form (`/rewards/{id}`), for traces:
 * the values in the path (ids, slugs) never appear in it, nor does a query string. A path that
 * no template built holds no caller's value (every client builds those with `restPath`) and is
 * its own template. Of several templates that match, one that matches the whole path wins over a
 * prefix, then the one with the most literal text.
 */
export function routeTemplateOf(path: string): string {
  const query = path.indexOf('?');
  const bare = query === -1 ? path : path.slice(0, query);
  let best: { template: string; length: number; rank: number } | undefined;
  for (const template of compiled.keys()) {
    const { pattern, literal } = patternOf(template);
    const match = pattern.exec(bare);
    if (!match) continue;
    const rank = (match[0].length === bare.length ? 1e9 : 0) + literal;
    if (!best || rank > best.rank) best = { template, length: match[0].length, rank };
  }
  if (!best) return bare;
  return `${best.template.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')}${bare.slice(best.length)}`;
}
