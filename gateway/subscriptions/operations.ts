import { getOperationAST, print, type DocumentNode, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import type { ApolloServer, BaseContext } from '@apollo/server';
import type { SubscriptionExecutor } from './executor.ts';

export type Headers = Record<string, string | string[] | undefined>;

export interface OperationArgs {
  document: DocumentNode;
  operationName?: string | null | undefined;
  variableValues?: Record<string, unknown> | null | undefined;
  headers: Headers;
}

/**
 * The transports type results as graphql-js results with GraphQLError instances; ours carry errors
 * already formatted (codes set, unexpected ones masked), which serialise identically.
 */
type WireResult = ExecutionResult | AsyncIterableIterator<ExecutionResult>;
const onTheWire = (result: FormattedExecutionResult | AsyncIterableIterator<FormattedExecutionResult>) => result as WireResult;

/**
 * What both streaming transports run: subscriptions through the executor, queries and mutations
 * through Apollo Server exactly as over HTTP, so the transports stay thin.
 */
export function createOperationRunner<Context extends BaseContext & { headers: Headers }>(executor: SubscriptionExecutor, apollo: ApolloServer<Context>) {
  return {
    subscribe: async ({ document, operationName, variableValues, headers }: OperationArgs): Promise<WireResult> =>
      onTheWire(await executor.subscribe({ document, operationName: operationName ?? null, variables: variableValues ?? null, headers })),
    async execute({ document, operationName, variableValues, headers }: OperationArgs): Promise<WireResult> {
      const operation = getOperationAST(document, operationName ?? undefined);
      if (operation?.operation === 'subscription') return onTheWire(await executor.subscribe({ document, operationName: operationName ?? null, variables: variableValues ?? null, headers }));
      const response = await apollo.executeOperation(
        { query: print(document), ...(operationName ? { operationName } : {}), ...(variableValues ? { variables: variableValues } : {}) },
        { contextValue: { headers } as Context },
      );
      return onTheWire(response.body.kind === 'single' ? response.body.singleResult : { errors: [{ message: 'incremental delivery is not supported on this transport', extensions: { code: 'BAD_REQUEST' } }] });
    },
  };
}

export type OperationRunner = ReturnType<typeof createOperationRunner>;

/** connectionParams or headers, with names in lower case as HTTP headers are. */
export function lowerCaseKeys(params: unknown): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(params && typeof params === 'object' ? params : {})) {
    if (typeof value === 'string' || Array.isArray(value)) out[name.toLowerCase()] = value as string | string[];
  }
  return out;
}
