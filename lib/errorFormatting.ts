import { GraphQLError, parse, visit, type ASTNode, type GraphQLFormattedError } from 'graphql';
import { ApolloServerErrorCode, unwrapResolverError } from '@apollo/server/errors';
import { ErrorCode } from './errors.ts';
import type { Logger } from './logger.ts';

/** Our own codes, and the ones Apollo Server raises for a request it refuses. */
const KNOWN_CODES = new Set<string>([
  ...Object.values(ErrorCode),
  ApolloServerErrorCode.GRAPHQL_PARSE_FAILED,
  ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED,
  ApolloServerErrorCode.PERSISTED_QUERY_NOT_FOUND,
  ApolloServerErrorCode.PERSISTED_QUERY_NOT_SUPPORTED,
  ApolloServerErrorCode.OPERATION_RESOLUTION_FAILURE,
  ApolloServerErrorCode.BAD_REQUEST,
]);

/** The codes an error may reach a client with on purpose (README, "Errors"); anything else is masked as `INTERNAL_SERVER_ERROR`. */
export const KNOWN_ERROR_CODES: readonly string[] = [...KNOWN_CODES];

/**
 * Errors we raise on purpose carry a known code and pass through. Anything else is a bug: its
 * message could hold anything (a URL, a header), so the client sees a generic message and the
 * log keeps the detail.
 */
function maskUnexpectedErrors(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && KNOWN_CODES.has(code)) return formatted;
    const original = unwrapResolverError(error);
    // An operation cut off because its caller left (a socket closed mid-query): nobody reads the
    // answer, and nothing is wrong. At error level, any client could write a line with a stack.
    const cause = original instanceof GraphQLError && original.originalError ? original.originalError : original;
    if (cause instanceof Error && cause.name === 'AbortError') logger.debug({ path: formatted.path, reason: cause.message }, 'operation cancelled');
    else logger.error({ err: original instanceof Error ? { name: original.name, message: original.message, stack: original.stack } : String(original), path: formatted.path }, 'unexpected error');
    return { message: 'Internal server error', ...(formatted.path ? { path: formatted.path } : {}), ...(formatted.locations ? { locations: formatted.locations } : {}), extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}


/** Messages of GraphQL's value checks: the argument's value is wrong, not the operation's shape. */
const VALUE_ERROR = /does not exist in ".+" enum|^Expected value of type|cannot represent|^Expected type ".+" to be an object|is not defined by type|of required type .+ was not provided|^(Date|DateTime) /;

/** The argument path (`input.eventTypes`) at a source offset, or where a variable is used. */
function argumentAt(source: string, offset: number | undefined, variable: string | undefined): string | undefined {
  let document;
  try {
    document = parse(source);
  } catch {
    return undefined;
  }
  const path: string[] = [];
  let found: string | undefined;
  const contains = (node: ASTNode) => offset !== undefined && node.loc !== undefined && node.loc.start <= offset && offset < node.loc.end;
  // The innermost argument or input field around the offending value, or around the variable.
  const enter = (node: ASTNode & { name: { value: string } }) => {
    path.push(node.name.value);
    if (contains(node)) found = path.join('.');
  };
  const leave = () => {
    path.pop();
  };
  visit(document, {
    Argument: { enter, leave },
    ObjectField: { enter, leave },
    Variable(node) {
      if (variable && node.name.value === variable && path.length > 0 && found === undefined) found = path.join('.');
    },
  });
  return found;
}

/**
 * A wrong argument value is the caller's input error whether it arrives as a literal or a
 * variable: both become BAD_USER_INPUT with the argument named, so a form can point at it.
 */
function normaliseInputError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  if (!(error instanceof GraphQLError) || !error.source) return formatted;
  const variable = /^Variable "\$(\w+)" got invalid value/.exec(formatted.message)?.[1];
  const literal = code === 'GRAPHQL_VALIDATION_FAILED' && VALUE_ERROR.test(formatted.message);
  if (!literal && !(code === 'BAD_USER_INPUT' && variable)) return formatted;
  const argument = argumentAt(error.source.body, literal ? error.positions?.[0] : undefined, variable);
  return { ...formatted, extensions: { ...formatted.extensions, code: 'BAD_USER_INPUT', ...(argument ? { argument } : {}) } };
}

/** graphql-js's hints at names the schema holds ("Did you mean ..."), which production keeps to itself. */
const SUGGESTION = / ?Did you mean(.+?)\?$/s;

/** The message without graphql-js's suggestion of similar names (as Apollo Server's `hideSchemaDetailsFromClientErrors`). */
export function withoutSuggestions(formatted: GraphQLFormattedError): GraphQLFormattedError {
  return SUGGESTION.test(formatted.message) ? { ...formatted, message: formatted.message.replace(SUGGESTION, '') } : formatted;
}

/** A leaf's value its type refused while the answer was written: graphql-js's scalars and enums, and ours (lib/scalars.ts). */
const UNREPRESENTABLE = /^(Int|Float|String|Boolean|ID|Date|DateTime|JSON|Enum "\w+") cannot represent (.*?)(?:: (-?\d[\d.e+-]*))?$/s;

/**
 * In a subgraph, every value in an answer came from its service: one the field's type cannot carry
 * (an Int past 32 bits, a date that does not exist) is the service's error, named at its field.
 * Only a number is quoted to the client; the log keeps the whole message.
 */
function upstreamValueError(logger: Logger, service: string) {
  return (formatted: GraphQLFormattedError): GraphQLFormattedError => {
    if (!formatted.path || formatted.extensions?.code !== undefined && formatted.extensions.code !== 'INTERNAL_SERVER_ERROR') return formatted;
    const match = UNREPRESENTABLE.exec(formatted.message);
    if (!match) return formatted;
    logger.warn({ path: formatted.path, detail: formatted.message }, 'the service answered a value the schema cannot carry');
    const what = match[3] !== undefined ? match[3] : 'a value';
    return {
      message: `${service}: the service answered ${what}, which ${match[1]} cannot represent`,
      path: formatted.path,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code: ErrorCode.UpstreamError, service },
    };
  };
}

export interface FormatOptions {
  /** Drop "Did you mean ..." from messages: they reveal field, argument and enum names. @default false */
  hideSuggestions?: boolean;
  /** The service a subgraph wraps: a value in its answer that no type carries is that service's error. */
  service?: string;
}

/**
 * graphql-js stops its check that same-named fields merge once the comparisons pass a budget (they
 * grow with the square of the repeats: some 700 copies of one field), and says only this.
 */
const VALIDATION_ABORTED = 'Validation aborted.';
const ABORTED_MESSAGE = 'the operation repeats fields of one name too often in one selection set to be checked (graphql-js stops its merge check); select each field once, or alias fewer copies';

/** The one formatError of every server: input errors named, upstream values no type carries blamed, unexpected errors masked. */
export function formatGraphError(logger: Logger, { hideSuggestions = false, service }: FormatOptions = {}) {
  const mask = maskUnexpectedErrors(logger);
  const upstreamValue = service === undefined ? undefined : upstreamValueError(logger, service);
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const worded = formatted.message === VALIDATION_ABORTED ? { ...formatted, message: ABORTED_MESSAGE } : formatted;
    const blamed = upstreamValue ? upstreamValue(worded) : worded;
    const result = mask(normaliseInputError(blamed, error), error);
    return hideSuggestions ? withoutSuggestions(result) : result;
  };
}
