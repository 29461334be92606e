import type { ApolloGateway } from '@apollo/gateway';

/** What Apollo Server needs of a gateway: the layers below each wrap one and are one. */
export type GatewayInterface = Pick<ApolloGateway, 'load' | 'onSchemaLoadOrUpdate' | 'stop'>;
type LoadResult = Awaited<ReturnType<ApolloGateway['load']>>;
export type Executor = NonNullable<LoadResult['executor']>;

/** The gateway with its executor run through `wrap` once loaded; schema updates and stop pass through. */
export function wrapExecutor(gateway: GatewayInterface, wrap: (inner: Executor) => Executor): GatewayInterface {
  return {
    onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
    stop: () => gateway.stop(),
    async load(options) {
      const loaded = await gateway.load(options);
      return loaded.executor ? { ...loaded, executor: wrap(loaded.executor) } : loaded;
    },
  };
}
