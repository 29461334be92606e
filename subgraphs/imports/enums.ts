/**
 * GraphQL enum names mapped to the values the service speaks. The service's statuses are an open
 * set: what it writes beyond these is `OTHER` (resolvers/imports.ts), with the text beside it.
 */
export const ImportStatus = { IN_PROGRESS: 'in_progress', COMPLETED: 'completed', FAILED: 'failed', OTHER: 'other' } as const;
export type ImportStatus = (typeof ImportStatus)[keyof typeof ImportStatus];

const KNOWN: ReadonlySet<string> = new Set([ImportStatus.IN_PROGRESS, ImportStatus.COMPLETED, ImportStatus.FAILED]);

/** A status as the service wrote it, as one the graph knows. */
export function knownStatus(text: string): ImportStatus {
  const normal = text.trim().toLowerCase();
  return KNOWN.has(normal) ? (normal as ImportStatus) : ImportStatus.OTHER;
}

/** Read through `knownStatus`, so `final` and the subscription's end never disagree with `status`. */
export function isFinalStatus(text: string): boolean {
  const status = knownStatus(text);
  return status === ImportStatus.COMPLETED || status === ImportStatus.FAILED;
}
