/**
 * Real services wrap or do not wrap their payloads as they please; clients accept both:
 * `{success, result}`, `{status, code, message, results}`, or the bare value.
 */
export function unwrap(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  if ('result' in record && ('success' in record || 'status' in record)) return record.result;
  if ('results' in record && ('status' in record || 'code' in record)) return record.results;
  return body;
}

/** A number the upstream may send as text ("12"); undefined for anything that is not a number. */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A header value by name in any case. */
export function headerValue(headers: Record<string, string>, pattern: RegExp): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (pattern.test(name)) return value;
  return undefined;
}

/** Liberal readers of upstream JSON: whatever arrives, a value of the wanted type or null. */
export const asRecord = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
/** Text, or a number or boolean written as text; anything else is no text (an object made text is `[object Object]`, or throws). */
export const asText = (value: unknown): string | null => (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null);
export const asNumber = (value: unknown): number | null => toNumber(value) ?? null;
export const asBoolean = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : null);
