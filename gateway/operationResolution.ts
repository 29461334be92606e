import { GraphQLError } from 'graphql';
import { wrapExecutor, type GatewayInterface } from './wrapExecutor.ts';

/**
 * An operation name that names no operation of the document (or none given for a document of
 * several) reaches the executor: Apollo Server leaves it to the executor to say so, and turns the
 * error it returns into a 400 OPERATION_RESOLUTION_FAILURE. Said here, before anything else runs,
 * in graphql-js's words: the shortcuts below assumed an operation and failed with a 500, after
 * planning had already picked one.
 */
export function withResolvedOperation(gateway: GatewayInterface): GatewayInterface {
  return wrapExecutor(gateway, (inner) => async (requestContext) => {
    if (requestContext.operation) return inner(requestContext);
    const { operationName } = requestContext.request;
    const message = operationName
      ? `Unknown operation named "${operationName}".`
      : requestContext.document.definitions.some((definition) => definition.kind === 'OperationDefinition')
        ? 'Must provide operation name if query contains multiple operations.'
        : 'Must provide an operation.';
    return { errors: [new GraphQLError(message)] };
  });
}
