/**
 * The service writes instants as `month/day/year hour:minute:second` (its callbacks say GMT); the
 * graph's `DateTime` is ISO 8601. A text that is not such a date, or names a day that does not
 * exist, reads as null rather than as a wrong instant.
 */
const SERVICE_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

export function serviceDateToIso(value: string): string | null {
  const match = SERVICE_DATE.exec(value.trim());
  if (!match) return null;
  const [month, day, year, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(ms);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return null;
  return date.toISOString();
}
