import type { Resolvers } from '../__generated__/resolvers.ts';

export const freightResolvers: Resolvers = {
  Query: {
    freights: (_parent, _args, { client }) => client.listFreights(),
    statusTypes: (_parent, _args, { client }) => client.listStatusTypes(),
  },
  FreightQuotation: {
    createdAt: (freight) => freight.created_at,
    saleSystem: (freight) => freight.sale_system,
  },
  FreightResponseProduct: {
    categoryNames: (product) => product.category_names,
  },
  FreightOption: {
    shippingMethod: (option) => option.shipping_method,
    courierName: (option) => option.courier_name,
    deliveryTime: (option) => option.delivery_time,
  },
};
