import {
  GraphQLError,
  SingleFieldSubscriptionsRule,
  getOperationAST,
  getVariableValues,
  parse,
  specifiedRules,
  validate,
  type ASTVisitFn,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { illFormedVariablesMessage } from '../../lib/requestChecks.ts';
import { isOperationLimitsRule } from '../../lib/operationShapeLimits.ts';
import { conditionalTopLevel, fragmentsOf, rootDirectivesMessage } from './planning.ts';

/** An operation as a streaming transport received it, before anything about it is trusted. */
export interface OperationParams {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
}

const isRecord = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with a request's shape (Apollo Server's and graphql-sse's rules: a string `query`,
 * an object or nothing for `variables` and `extensions`, a string or nothing for `operationName`),
 * or undefined when it is well formed.
 */
export function requestShapeError({ query, operationName, variables, extensions }: OperationParams & { extensions?: unknown }): string | undefined {
  if (typeof query !== 'string' || query === '') return 'GraphQL operations must contain a non-empty `query`.';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return '`operationName` must be a string if provided.';
  if (variables !== undefined && variables !== null && !isRecord(variables)) return '`variables` must be an object if provided.';
  if (extensions !== undefined && extensions !== null && !isRecord(extensions)) return '`extensions` must be an object if provided.';
  return undefined;
}

export type Prepared =
  | {
      document: DocumentNode;
      operationName: string | undefined;
      /** As sent: coerced only to check them, as the executor and Apollo Server coerce them again. */
      variableValues: Record<string, unknown> | undefined;
      /** The text as the client sent it, so that Apollo Server's error locations point into it. */
      query: string;
    }
  | { errors: GraphQLError[] };

const coded = (error: GraphQLError, code: string) =>
  error.extensions?.code ? error : new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, originalError: error.originalError, extensions: { ...error.extensions, code } });

const refused = (message: string, code: string): Prepared => ({ errors: [new GraphQLError(message, { extensions: { code } })] });

/**
 * graphql-js 16's single-root-field rule, refusing first what it cannot check: `@skip` or `@include`
 * in a subscription's top level. It evaluates them with no variables, so one given a variable threw
 * out of `validate` (a 500, or graphql-ws closing the whole connection with 4500). The spec's rule,
 * and graphql-js 17's, forbid them there: a subscription's one root field cannot hang on a variable.
 */
function singleRootFieldRule(context: ValidationContext): ASTVisitor {
  const graphqlRule = SingleFieldSubscriptionsRule(context);
  return {
    OperationDefinition(node, ...rest) {
      if (node.operation === 'subscription') {
        const conditional = conditionalTopLevel(node, fragmentsOf(context.getDocument()));
        if (conditional.length) {
          context.reportError(new GraphQLError(rootDirectivesMessage(node), { nodes: conditional }));
          return undefined;
        }
      }
      // graphql-js's rule is a visitor of this one node kind, entered as a plain function.
      const check = (graphqlRule as { OperationDefinition?: ASTVisitFn<OperationDefinitionNode> }).OperationDefinition;
      return check?.call(graphqlRule, node, ...rest);
    },
  };
}

/** The rules Apollo Server runs, with graphql-js's single-root-field rule in the form that cannot throw. */
const graphqlRules = specifiedRules.map((rule) => (rule === SingleFieldSubscriptionsRule ? singleRootFieldRule : rule));

/** Longer query texts are parsed every time: no client can fill the memory with padded text. */
const MAX_REMEMBERED_QUERY_LENGTH = 16 * 1024;
const REMEMBERED_DOCUMENTS = 1000;

/**
 * What Apollo Server checks before running an operation over HTTP, for graphql-ws, SSE and
 * multipart HTTP: the request's shape, variables that UTF-8 can carry, the document's syntax, the
 * validation rules (the gateway's limits among them), which operation to run, and its variables
 * against their types. Every refusal carries the code HTTP clients get for the same mistake, and
 * comes before anything runs: an `error` message over graphql-ws, a 400 over multipart HTTP.
 *
 * A query text that passed is remembered with its parsed document (as Apollo Server's document
 * store does): identical subscribers, the common case, then share one document instead of each
 * holding its own for as long as it stays subscribed (about 12 KiB for a small subscription).
 */
export function createOperationPreparer({ schema, rules = [] }: { schema: GraphQLSchema; rules?: readonly ValidationRule[] }) {
  const allRules = [...graphqlRules, ...rules];
  // The gateway's shape rule carries its token bound: parsed within it, as Apollo Server parses over HTTP.
  const maxTokens = rules.find(isOperationLimitsRule)?.limits.maxTokens;
  const valid = new Map<string, DocumentNode>();
  const remember = (query: string, document: DocumentNode) => {
    if (query.length > MAX_REMEMBERED_QUERY_LENGTH) return;
    // Map order is insertion order: the oldest goes.
    if (valid.size >= REMEMBERED_DOCUMENTS) valid.delete(valid.keys().next().value!);
    valid.set(query, document);
  };
  return (params: OperationParams & { extensions?: unknown }): Prepared => {
    const { query, operationName, variables } = params;
    const shape = requestShapeError(params);
    if (shape) return refused(shape, 'BAD_REQUEST');
    if (typeof query !== 'string') return refused('GraphQL operations must contain a non-empty `query`.', 'BAD_REQUEST');
    const illFormed = illFormedVariablesMessage(variables);
    if (illFormed) return refused(illFormed, 'BAD_USER_INPUT');
    let document = valid.get(query);
    if (!document) {
      try {
        document = parse(query, { maxTokens });
      } catch (error) {
        if (error instanceof GraphQLError) return { errors: [coded(error, 'GRAPHQL_PARSE_FAILED')] };
        throw error;
      }
      let invalid: readonly GraphQLError[];
      try {
        invalid = validate(schema, document, allRules);
      } catch (error) {
        // A rule that throws rather than reports (graphql-js's own have): still this operation's mistake alone.
        if (error instanceof GraphQLError) return { errors: [coded(error, 'GRAPHQL_VALIDATION_FAILED')] };
        throw error;
      }
      if (invalid.length) return { errors: invalid.map((error) => coded(error, 'GRAPHQL_VALIDATION_FAILED')) };
      remember(query, document);
    }
    // The shape check made it a string or nothing.
    const name = (operationName ?? undefined) as string | undefined;
    const operation = getOperationAST(document, name);
    if (!operation) {
      return refused(name ? `Unknown operation named "${name}".` : 'Must provide operation name if query contains multiple operations.', 'OPERATION_RESOLUTION_FAILURE');
    }
    // The shape check made it an object or nothing.
    const variableValues = (variables ?? undefined) as Record<string, unknown> | undefined;
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {});
    if (coerced.errors) return { errors: coerced.errors.map((error) => coded(error, 'BAD_USER_INPUT')) };
    return { document, operationName: name, variableValues, query };
  };
}

export type OperationPreparer = ReturnType<typeof createOperationPreparer>;
