import { GraphQLError } from 'graphql';

/**
 * The graph's error vocabulary: everything here is public API. Clients match on
 * `extensions.code`, never on a message or a class.
 */
export const ErrorCode = {
  BadUserInput: 'BAD_USER_INPUT',
  Unauthenticated: 'UNAUTHENTICATED',
  Forbidden: 'FORBIDDEN',
  NotFound: 'NOT_FOUND',
  Conflict: 'CONFLICT',
  Teapot: 'TEAPOT',
  RateLimited: 'RATE_LIMITED',
  DataNotReady: 'DATA_NOT_READY',
  CursorExpired: 'CURSOR_EXPIRED',
  UpstreamError: 'UPSTREAM_ERROR',
  UpstreamUnavailable: 'UPSTREAM_UNAVAILABLE',
  /** The operation would cost, or has made, more upstream calls than its budget. */
  OperationTooExpensive: 'OPERATION_TOO_EXPENSIVE',
  /** A subscriber that fell too many events, or bytes of events, behind was ended: subscribe again from its last cursor. */
  SubscriberTooSlow: 'SUBSCRIBER_TOO_SLOW',
  /** Trusted documents enforced: the operation's text is not in the manifest (Apollo Router's code). */
  PersistedQueryNotInList: 'PERSISTED_QUERY_NOT_IN_LIST',
  /** No trusted document and no automatic persisted query has this id: send the text (Apollo's code). */
  PersistedQueryNotFound: 'PERSISTED_QUERY_NOT_FOUND',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * What a failed write (any method but GET) did upstream, when the service never said
 * (`extensions.writeOutcome`): none of the services takes an idempotency key, so the client has to
 * read before it sends the write again. Absent when nothing was sent, or the service answered.
 */
export const WriteOutcome = {
  /** The request reached the service and no answer came back that says what it did. */
  Unknown: 'UNKNOWN',
  /** The service answered 2xx, and the answer could not be read. */
  Applied: 'APPLIED',
} as const;
export type WriteOutcome = (typeof WriteOutcome)[keyof typeof WriteOutcome];

export interface FieldError {
  field: string;
  messages: string[];
}

/** The one extension shape of every error this graph raises. */
export interface GraphErrorExtensions {
  code: ErrorCode;
  /** The REST service behind the failure. */
  service?: string;
  /** The upstream HTTP status, when an upstream answered. */
  status?: number;
  /** The argument that failed local validation. */
  argument?: string;
  retryAfterSeconds?: number;
  fieldErrors?: FieldError[];
  /** Upstream calls the operation was estimated to cost (OPERATION_TOO_EXPENSIVE before it ran). */
  estimate?: number;
  /** Upstream calls the operation or the subgraph request may make (OPERATION_TOO_EXPENSIVE). */
  budget?: number;
  writeOutcome?: WriteOutcome;
}

declare module 'graphql' {
  interface GraphQLErrorExtensions {
    service?: string;
    status?: number;
    argument?: string;
    retryAfterSeconds?: number;
    fieldErrors?: FieldError[];
    estimate?: number;
    budget?: number;
    writeOutcome?: WriteOutcome;
  }
}

export function graphError(message: string, extensions: GraphErrorExtensions): GraphQLError {
  return new GraphQLError(message, { extensions: { ...extensions } });
}

