/** How codegen maps the marketplace schema onto the client's DTOs. Read by the root codegen.ts. */
export const marketplaceCodegen = {
  schema: 'schema/marketplace.graphql',
  output: 'subgraphs/marketplace/__generated__/resolvers.ts',
  contextType: '../context.ts#MarketplaceContext',
  mappers: {
    LabelGroup: '../resolvers/labelGroups.ts#LabelGroupParent',
    LabelGroupOrder: '../client.ts#PlpOrderDto',
    Question: '../client.ts#QuestionDto',
    QuestionAnswer: '../client.ts#QuestionAnswerDto',
    Product: '../client.ts#ProductDto',
    Category: '../client.ts#CategoryDto',
    Specification: '../client.ts#KeyValueDto',
    Variation: '../client.ts#VariationDto',
    StockEntry: '../client.ts#StockDto',
    SymbolicReturnInvoice: '../client.ts#SymbolicReturnDto',
    FreightQuotation: '../client.ts#FreightDto',
    FreightOption: '../client.ts#FreightOptionDto',
    FreightRequestProduct: '../client.ts#FreightRequestProductDto',
    FreightResponseProduct: '../client.ts#FreightResponseProductDto',
    OrderStatusType: '../client.ts#StatusTypeDto',
  },
  enumValues: {
    QuestionStatus: '../enums.ts#QuestionStatus',
  },
  scalars: { DateTime: 'string', Date: 'string', JSON: 'unknown' },
};
