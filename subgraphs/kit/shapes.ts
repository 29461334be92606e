import { z } from 'zod';
import { upstreamContractError } from './errors.ts';

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
export const identifier = z.union([z.string().min(1), z.number().transform(String)]);
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

/** The body read through its declared shape, or `UPSTREAM_ERROR` naming what is missing. */
export function parseAnswer<T>(schema: z.ZodType<T>, body: unknown, where: { service: string; operation: string; status?: number }): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw upstreamContractError(where.service, `${where.operation} answered a body of the wrong shape (${describeIssues(result.error.issues)})`, where.status);
}
