/** How codegen maps the imports schema onto the client's DTOs. Read by the root codegen.ts. */
export const importsCodegen = {
  schema: 'schema/imports.graphql',
  output: 'subgraphs/imports/__generated__/resolvers.ts',
  contextType: '../context.ts#ImportsContext',
  mappers: {
    Import: '../client.ts#ImportDto',
  },
  enumValues: {
    ImportStatus: '../enums.ts#ImportStatus',
  },
};
