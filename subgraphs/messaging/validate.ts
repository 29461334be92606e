import { badUserInput } from '../kit/errors.ts';
import { singleSegment } from '../kit/paths.ts';
import { httpUrl, lengthBetween, maxLength } from '../kit/validate.ts';

/** The service's own input rules, checked before any call so that a bad argument costs nothing upstream. */

/**
 * Digits with the country code, which is what the service wants; a leading `+` and spaces from the
 * caller are dropped. 8 to 15 digits: E.164 allows at most 15, and no country's number with its
 * code is shorter than 8.
 */
export function mobileNumber(value: string, argument: string): string {
  const digits = value.trim().replace(/^\+/, '').replace(/[\s]/g, '');
  if (!/^\d+$/.test(digits)) throw badUserInput(argument, 'must be digits with the country code (a leading + and spaces are allowed)');
  if (digits.length < 8 || digits.length > 15) throw badUserInput(argument, `must be 8 to 15 digits with the country code; got ${digits.length}`);
  return digits;
}

/** Keywords are 2 to 30 characters of letters, digits and spaces; the service ignores case. */
export function keyword(value: string, argument: string): string {
  const trimmed = value.trim();
  lengthBetween(trimmed, argument, 2, 30);
  if (!/^[A-Za-z0-9 ]+$/.test(trimmed)) throw badUserInput(argument, 'may hold only letters, digits and spaces');
  return trimmed;
}

export const RESPONDER_CONTENT_MAX = 1600;

/** At least one of content and media URL; content at most 1,600 characters; a URL starting with http or https. */
export function responderContent(input: { content?: string | null; mediaUrl?: string | null }): { content?: string; mediaUrl?: string } {
  const content = input.content ?? undefined;
  const mediaUrl = input.mediaUrl ?? undefined;
  if (!content?.trim() && !mediaUrl?.trim()) throw badUserInput('input.content', 'give content, a media URL, or both');
  if (content !== undefined) maxLength(content, 'input.content', RESPONDER_CONTENT_MAX);
  if (mediaUrl !== undefined && mediaUrl.trim() !== '') httpUrl(mediaUrl, 'input.mediaUrl');
  return { ...(content?.trim() ? { content } : {}), ...(mediaUrl?.trim() ? { mediaUrl } : {}) };
}

/**
 * Ids travel in URL paths: refuse what is blank, absurdly long or a dot segment here, so the refusal
 * names the GraphQL argument rather than the client's path placeholder (`storeId` for `store(id:)`).
 */
export function id(value: string, argument: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw badUserInput(argument, 'must not be blank');
  return singleSegment(maxLength(trimmed, argument, 100), argument);
}
