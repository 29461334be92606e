/** How codegen maps the gatewayAdmin schema onto the client's DTOs. Read by the root codegen.ts. */
export const gatewayAdminCodegen = {
  schema: 'schema/gatewayAdmin.graphql',
  output: 'subgraphs/gatewayAdmin/__generated__/resolvers.ts',
  contextType: '../context.ts#GatewayAdminContext',
  mappers: {
    GatewayApi: '../client.ts#ApiDto',
    GatewayConsumer: '../client.ts#ConsumerDto',
    OAuthApplication: '../client.ts#ApplicationDto',
    CreatedOAuthApplication: '../client.ts#CreatedApplicationDto',
    OAuth2Plugin: '../client.ts#PluginDto',
    EnabledOAuth2Plugin: '../client.ts#EnabledPluginDto',
  },
  enumValues: {
    OAuthGrant: '../client.ts#OAuthGrant',
  },
  scalars: { DateTime: 'string' },
};
