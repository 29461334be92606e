import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import type { Logger } from '../../lib/logger.ts';

const KNOWN_CODES = new Set([
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'TEAPOT',
  'RATE_LIMITED',
  'DATA_NOT_READY',
  'CURSOR_EXPIRED',
  'UPSTREAM_ERROR',
  'UPSTREAM_UNAVAILABLE',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
]);

/**
 * Errors we raise on purpose carry a known code and pass through. Anything else is a bug: its
 * message could hold anything (a URL, a header), so the client sees a generic message and the
 * log keeps the detail.
 */
export function maskUnexpectedErrors(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && KNOWN_CODES.has(code)) return formatted;
    const original = unwrapResolverError(error);
    logger.error({ err: original instanceof Error ? { name: original.name, message: original.message, stack: original.stack } : String(original), path: formatted.path }, 'unexpected error');
    return { message: 'Internal server error', ...(formatted.path ? { path: formatted.path } : {}), ...(formatted.locations ? { locations: formatted.locations } : {}), extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}
