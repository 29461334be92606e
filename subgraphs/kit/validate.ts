import { badUserInput } from './errors.ts';

/** Local checks of limits the upstream documents, so a bad argument never costs an upstream call. */

export function intInRange(value: number | null | undefined, argument: string, min: number, max: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) throw badUserInput(argument, `must be from ${min} to ${max}; got ${value}`);
  return value;
}

export function nonBlank(value: string, argument: string): string {
  if (value.trim() === '') throw badUserInput(argument, 'must not be blank');
  return value;
}

export function maxLength(value: string, argument: string, max: number): string {
  if (value.length > max) throw badUserInput(argument, `must be at most ${max} characters; got ${value.length}`);
  return value;
}

export function lengthBetween(value: string, argument: string, min: number, max: number): string {
  if (value.length < min || value.length > max) throw badUserInput(argument, `must be from ${min} to ${max} characters; got ${value.length}`);
  return value;
}

/** An absolute http(s) URL. */
export function httpUrl(value: string, argument: string): string {
  if (value.trim() === '') throw badUserInput(argument, 'must not be empty');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badUserInput(argument, 'must be an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badUserInput(argument, `must use http or https; got ${url.protocol.replace(':', '')}`);
  return value;
}

export function listSize<T>(values: readonly T[], argument: string, max: number): readonly T[] {
  if (values.length > max) throw badUserInput(argument, `may hold at most ${max} items; got ${values.length}`);
  return values;
}
