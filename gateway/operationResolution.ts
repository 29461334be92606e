import { GraphQLError } from 'graphql';
import type { ApolloGateway } from '@apollo/gateway';

type GatewayInterface = Pick<ApolloGateway, 'load' | 'onSchemaLoadOrUpdate' | 'stop'>;
type LoadResult = Awaited<ReturnType<ApolloGateway['load']>>;
type Executor = NonNullable<LoadResult['executor']>;

/**
 * An operation name that names no operation of the document (or none given for a document of
 * several) reaches the executor: Apollo Server leaves it to the executor to say so, and turns the
 * error it returns into a 400 OPERATION_RESOLUTION_FAILURE. Said here, before anything else runs,
 * in graphql-js's words: the shortcuts below assumed an operation and failed with a 500, after
 * planning had already picked one.
 */
export function withResolvedOperation(gateway: GatewayInterface): GatewayInterface {
  return {
    onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
    stop: () => gateway.stop(),
    async load(options) {
      const loaded = await gateway.load(options);
      const inner = loaded.executor;
      if (!inner) return loaded;
      const executor: Executor = async (requestContext) => {
        if (requestContext.operation) return inner(requestContext);
        const { operationName } = requestContext.request;
        const message = operationName
          ? `Unknown operation named "${operationName}".`
          : requestContext.document.definitions.some((definition) => definition.kind === 'OperationDefinition')
            ? 'Must provide operation name if query contains multiple operations.'
            : 'Must provide an operation.';
        return { errors: [new GraphQLError(message)] };
      };
      return { ...loaded, executor };
    },
  };
}
