import { badUserInput } from '../kit/errors.ts';
import { nonBlank } from '../kit/validate.ts';

/**
 * Checks of optional arguments that name something (a user, a hashtag, a country). The service
 * reads a blank parameter as an absent one, so a blank name would silently widen the answer to
 * everyone or everything: it is refused before any call instead.
 */

/** Absent stays absent; present must not be blank. */
export function optionalName(value: string | null | undefined, argument: string): string | undefined {
  return value === null || value === undefined ? undefined : nonBlank(value, argument);
}

/** As `optionalName`, and `#` alone names no hashtag either (hashtags are accepted with or without it). */
export function optionalHashtag(value: string | null | undefined, argument: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value.replace(/^\s*#/, '').trim() === '') throw badUserInput(argument, `must name a hashtag; got ${JSON.stringify(value)}`);
  return value;
}
