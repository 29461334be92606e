import { z } from 'zod';
import { upstreamContractError } from './errors.ts';
import { MAX_SEGMENT_CHARS } from './paths.ts';

/**
 * Declared shapes of upstream answers, checked at each client's boundary. A 2xx body that lacks
 * what its shape promises (an id, a required field, a list) is `UPSTREAM_ERROR` naming the service,
 * the call and the missing part, never a made-up "undefined", an empty list or a hiding null.
 *
 * The field helpers are liberal where real services are known to vary (numbers sent as text, ids
 * as numbers, `null` for an absent optional field) and strict about everything else. Schemas are
 * built once, at module load: building one per call would cost more than parsing.
 */

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/** An identifier: text, or a number the service sent unquoted. */
/** An id: an upstream one past what a path segment may hold could only be sent back as the caller's mistake. */
export const identifier = z.union([z.string().min(1).max(MAX_SEGMENT_CHARS), z.number().transform(String)]);
/** Required text; a number is accepted as its text. */
export const text = z.union([z.string(), z.number().transform(String)]);
/** Optional text: absent or null is null. */
export const optText = text.nullish().transform((value) => value ?? null);
/** A number, or its digits as text ("12"). */
export const num = z.union([z.number(), z.string().regex(NUMERIC).transform(Number)]);
export const optNum = num.nullish().transform((value) => value ?? null);
/** A boolean, or `"true"`/`"false"`. */
export const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);
export const optBool = bool.nullish().transform((value) => value ?? null);

/**
 * The most items a list in an answer may hold when its service documents no smaller page. A
 * service's own pages are far shorter; a list past this is a broken or hostile answer, and
 * reading it (then resolving every item in GraphQL) would cost the subgraph far more than its bytes.
 */
export const MAX_LIST_ITEMS = 10_000;

/** zod's own refusal of a list past `max`, worded as `z.array(…).max(max)` words it. */
const tooLong = (value: unknown[], max: number) => ({ code: 'too_big', origin: 'array', maximum: max, inclusive: true, input: value }) as const;

/**
 * A list in an answer, in place of `z.array`: refused past `max` items before any is read, and read
 * item by item up to the first that fails, whose issues alone are reported, as `z.array` reports
 * them. `z.array` goes on to the end: an issue, with its path, for every field of every bad item,
 * so that a 3 MB list of a million `{}` held a subgraph's event loop for 30 s and took gigabytes.
 *
 * A check that reads the list and puts the items' values in its place, as `overwrite` does (the
 * same loop in a `transform` cost two to four times `z.array` on the benchmark's answers), each
 * item run through zod's own entry with a context of the list's, as `z.array` runs them.
 */
export function listOf<T extends z.ZodType>(item: T, max: number = MAX_LIST_ITEMS): z.ZodType<z.output<T>[], z.input<T>[]> {
  const list = z.unknown().check((payload) => {
    const value = payload.value;
    if (!Array.isArray(value)) {
      payload.issues.push({ code: 'invalid_type', expected: 'array', input: value });
      return;
    }
    if (value.length > max) {
      payload.issues.push(tooLong(value, max));
      return;
    }
    const items: unknown[] = new Array(value.length);
    const context = { async: false } as const;
    for (let index = 0; index < value.length; index += 1) {
      const result = item._zod.run({ value: value[index], issues: [] }, context);
      if (result instanceof Promise) throw new z.core.$ZodAsyncError();
      if (result.issues.length) {
        for (const issue of result.issues) payload.issues.push({ ...issue, path: [index, ...(issue.path ?? [])] });
        return;
      }
      items[index] = result.value;
    }
    payload.value = items;
  });
  // The check put the items' values in place of the input, which zod's types cannot follow.
  return list as z.ZodType<unknown> as z.ZodType<z.output<T>[], z.input<T>[]>;
}

/** `shape`, for a list it reads whole or leaves to a hand-written reader (a tuple, `z.unknown()`), refused past `max` items first. */
export function capped<T>(shape: z.ZodType<T>, max: number = MAX_LIST_ITEMS): z.ZodType<T> {
  return z
    .unknown()
    .check((payload) => {
      if (Array.isArray(payload.value) && payload.value.length > max) payload.issues.push(tooLong(payload.value, max));
    })
    .pipe(shape);
}

function describePath(path: readonly PropertyKey[]): string {
  if (!path.length) return 'the body';
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out;
}

/**
 * Where an issue really is. A union (the envelope or the bare value, an array or `{items}`) reports
 * only "invalid input" at its own level: the branch that got furthest names the missing part.
 */
function located(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string } {
  const path = [...prefix, ...issue.path];
  let best: { path: PropertyKey[]; message: string } | undefined;
  if (issue.code === 'invalid_union') {
    for (const branch of issue.errors) {
      for (const inner of branch) {
        const candidate = located(inner, path);
        if (!best || candidate.path.length > best.path.length) best = candidate;
      }
    }
  }
  return best ?? { path, message: issue.message };
}

/** The first few problems, each with the path zod reports: enough to find the broken part. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 3).map((issue) => {
    const { path, message } = located(issue, []);
    return `${describePath(path)}: ${message}`;
  });
  return issues.length > 3 ? `${shown.join('; ')}; and ${issues.length - 3} more` : shown.join('; ');
}

/**
 * Hand-written readers of a hot answer's usual form, beside the zod shape they mirror. For what
 * they accept they give the value the shape gives; anything else (digits as text, a missing field,
 * another nesting) throws `UNUSUAL`, and the zod shape reads it: liberal where it may be, and the
 * one that words an error. zod's unions and objects cost some 20 µs for a reward catalogue.
 */
class UnusualShape extends Error {}
/** Thrown by a quick reader for what only the zod shape may read; made once, so throwing is cheap. */
export const UNUSUAL = new UnusualShape('not the usual shape');

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const quick = {
  object(value: unknown): Record<string, unknown> {
    if (isObject(value)) return value;
    throw UNUSUAL;
  },
  /** `listOf`'s list, before its items are read: past `max` the shape words the refusal. */
  array(value: unknown, max: number = MAX_LIST_ITEMS): readonly unknown[] {
    if (Array.isArray(value) && value.length <= max) return value;
    throw UNUSUAL;
  },
  /** `identifier` */
  identifier(value: unknown): string {
    if (typeof value === 'string' && value !== '' && value.length <= MAX_SEGMENT_CHARS) return value;
    if (typeof value === 'number') return String(value);
    throw UNUSUAL;
  },
  /** `text` */
  text(value: unknown): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return String(value);
    throw UNUSUAL;
  },
  /** `optText` */
  optText(value: unknown): string | null {
    return value === null || value === undefined ? null : quick.text(value);
  },
  /** A list the body may leave out (`listOf(…).nullish()`, absent or null read as empty). */
  list<T>(value: unknown, item: (value: unknown) => T, max: number = MAX_LIST_ITEMS): T[] {
    if (value === null || value === undefined) return [];
    return quick.array(value, max).map((entry) => item(entry));
  },
  /** `optBool`, booleans only: `"true"` and `"false"` go to the shape. */
  optBool(value: unknown): boolean | null {
    if (value === null || value === undefined) return null;
    if (typeof value === 'boolean') return value;
    throw UNUSUAL;
  },
  /** `optNum`, numbers only: digits as text go to the shape. */
  optNum(value: unknown): number | null {
    if (value === null || value === undefined) return null;
    if (typeof value === 'number') return value;
    throw UNUSUAL;
  },
};

/** The body read through its declared shape, or `UPSTREAM_ERROR` naming what is missing. */
export function parseAnswer<T>(schema: z.ZodType<T>, body: unknown, where: { service: string; operation: string; status?: number }, read?: (body: unknown) => T): T {
  if (read) {
    try {
      return read(body);
    } catch (error) {
      if (error !== UNUSUAL) throw error;
    }
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw upstreamContractError(where.service, `${where.operation} answered a body of the wrong shape (${describeIssues(result.error.issues)})`, where.status);
}
