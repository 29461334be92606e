import { SERVICE_ENTRY } from '../../lib/services.ts';
import { badUserInput, ErrorCode, graphError, missingCredential, upstreamContractError } from '../kit/errors.ts';
import { WriteOutcome } from '../../lib/errors.ts';
import { holdsCredential } from '../kit/cursors.ts';
import { z } from 'zod';
import { asRecord } from '../kit/envelopes.ts';
import { identifier, listOf, optBool, optNum, optText, parseAnswer, quick, text } from '../kit/shapes.ts';
import type { RestCall, RestResponse, RestTransport, StreamResponse } from '../kit/transport.ts';
import type { CallScope } from '../kit/callScope.ts';
import { MAX_SEGMENT_CHARS, restPath } from '../kit/paths.ts';

/** The gateway headers that carry a caller's marketplace credentials. */
export const CREDENTIAL_HEADERS = SERVICE_ENTRY.marketplace.credentialHeaders;
export type MarketplaceCredential = Partial<Record<keyof typeof CREDENTIAL_HEADERS, string>>;
const SERVICE = SERVICE_ENTRY.marketplace.name;

/** The service's limits the graph checks before calling it, which saves a call bound to be refused. */
export const LIMITS = {
  /** The longest SKU, of a product or a variation. */
  skuLength: 25,
  /** The stock list's largest `per_page`. */
  stockPerPage: 100,
  /** A variation's largest `qty`. */
  qty: 2_147_483_647,
} as const;

export interface KeyValueDto {
  key: string;
  value: string | null;
}

export interface CategoryDto {
  code: string | null;
  name: string | null;
}

export interface VariationDto {
  sku: string;
  qty: number | null;
  ean: string | null;
  images: string[];
  specifications: KeyValueDto[];
  product_sku: string | null;
}

export interface ProductDto {
  sku: string;
  name: string | null;
  description: string | null;
  status: string | null;
  qty: number | null;
  price: number | null;
  promotionalPrice: number | null;
  cost: number | null;
  weight: number | null;
  height: number | null;
  width: number | null;
  length: number | null;
  brand: string | null;
  ean: string | null;
  nbm: string | null;
  categories: CategoryDto[];
  images: string[];
  specifications: KeyValueDto[];
  variations: VariationDto[];
  variationAttributes: string[];
}

export interface QuestionAnswerDto {
  message: string | null;
  createdOn: string | null;
}

export interface QuestionDto {
  id: string;
  answered: boolean | null;
  message: string | null;
  answer: QuestionAnswerDto | null;
  name: string | null;
  sku: string | null;
  tags: string[];
  createdOn: string | null;
  customer: { name: string | null } | null;
}

export interface PlpOrderDto {
  code: string;
  customer: string | null;
  value: number | null;
}

export interface PlpDto {
  id: string;
  expiration_date: string | null;
  orders: PlpOrderDto[];
}

export interface StockDto {
  sku: string;
  recipientDocument: string | null;
  depositType: string | null;
  stock: number | null;
  reservedStock: number | null;
}

export interface SymbolicReturnDto {
  accessKey: string | null;
  number: string | null;
  series: string | null;
  issuedAt: string | null;
  cdVatNumber: string | null;
  delivery: string | null;
  orderAccessKey: string | null;
  xml: string | null;
}

export interface FreightOptionDto {
  shippingMethod: string | null;
  courierName: string | null;
  quantity: number | null;
  amount: number | null;
  deliveryTime: number | null;
}

export interface FreightRequestProductDto {
  sku: string | null;
  qty: number | null;
}

export interface FreightResponseProductDto {
  sku: string | null;
  categoryNames: string[];
  freights: FreightOptionDto[];
}

export interface FreightDto {
  account: { id: string | null; name: string | null } | null;
  createdAt: string | null;
  saleSystem: string | null;
  request: { path: string | null; zipcode: string | null; products: FreightRequestProductDto[] } | null;
  response: { render: string | null; products: FreightResponseProductDto[] } | null;
}

export interface StatusTypeDto {
  code: string;
  name: string | null;
}

export interface QuestionPageDto {
  questions: QuestionDto[];
  /** The upstream's token for the next page; null on the last. Vetted: it holds no credential. */
  cursor: string | null;
}

export interface ProductPageDto {
  products: ProductDto[];
  total: number | null;
  /** The next page's URL as a path below the base URL; null on the last. Vetted: it holds no credential. */
  next: string | null;
}

/** Fields of a new product, as the service names them. */
export interface NewProductDto {
  sku: string;
  name: string;
  [field: string]: unknown;
}

export interface VariationChangesDto {
  qty?: number;
  ean?: string;
  images?: readonly string[];
  specifications?: readonly { key: string; value: string }[];
}

export interface MarketplaceClient {
  listLabelGroups(): Promise<PlpDto[]>;
  /** Returns the new PLP's id, which the service gives only inside its message. */
  groupOrders(orderCodes: readonly string[]): Promise<{ id: string; message: string | null }>;
  ungroupLabelGroup(id: string): Promise<{ message: string | null }>;
  getLabels(id: string): Promise<unknown>;
  streamLabelsPdf(id: string): Promise<StreamResponse>;
  listQuestions(params: { platform: string; status?: string; cursor?: string }): Promise<QuestionPageDto>;
  getQuestion(id: string): Promise<QuestionDto | null>;
  deleteQuestion(id: string): Promise<void>;
  /** The answered question, or null when the service's answer does not carry it. */
  answerQuestion(id: string, answer: string): Promise<QuestionDto | null>;
  getVariation(sku: string): Promise<VariationDto | null>;
  /** The updated variation, or null when the service's answer does not carry it. */
  updateVariation(sku: string, changes: VariationChangesDto): Promise<VariationDto | null>;
  /** `price` is decimal text, as the service wants it. */
  updateVariationPrice(sku: string, price: string): Promise<VariationDto | null>;
  deleteVariation(sku: string): Promise<void>;
  sendInvoice(params: { recipientDocument: string; xml: string }): Promise<{ via: 'json' | 'multipart' }>;
  listStock(params: { recipientDocument?: string; sku?: string; page: number; perPage: number }): Promise<StockDto[]>;
  listSymbolicReturns(params: { cdVatNumber?: string; delivery?: string; orderAccessKey?: string }): Promise<SymbolicReturnDto[]>;
  /** The first page (with its filter), or the page a previous `next` points to. */
  /** The first page under `status`, or the page `next` points to (which must carry the same `status`, when it names one). */
  listProducts(params: { status?: string | undefined; next?: string }): Promise<ProductPageDto>;
  getProduct(sku: string): Promise<ProductDto | null>;
  /** The created product, or null when the service's answer does not carry it. */
  createProduct(product: NewProductDto): Promise<ProductDto | null>;
  listFreights(): Promise<FreightDto[]>;
  listStatusTypes(): Promise<StatusTypeDto[]>;
}

export interface MarketplaceClientOptions {
  transport: RestTransport;
  credential: MarketplaceCredential;
  /** The spec's `{base_url}`, as the transport's base: `next` URLs are checked against it. */
  apiUrl: string;
  /** The spec's `{api_url}`, where products are created. */
  productsApiUrl: string;
  /** The path segment the spec writes `mkt`. */
  marketplace: string;
  /** XML larger than this goes as a multipart file. */
  multipartThresholdBytes: number;
  /** The request's, which `transport` (its `scopedTransport`) puts on every call: here it is put on as the call is built. */
  scope?: CallScope;
}

/** Which credentials an endpoint wants: the spec's Authentication table. */
interface AuthProfile {
  /** `apiKey`: X-User-Email may be left out (GET /freights). */
  identity: 'full' | 'apiKey';
  account: 'required' | 'optional' | 'absent';
}
const FULL: AuthProfile = { identity: 'full', account: 'required' };

/** `2026-12-01`, from a date or a date-time. */
function calendarDate(value: unknown): string | null {
  const match = typeof value === 'string' ? /^\d{4}-\d{2}-\d{2}/.exec(value) : null;
  return match ? match[0] : null;
}

// The answers' declared shapes, built once (variants and their sources: docs/services/marketplace.md).

/** A list the body may leave out (a simple product has no variations): absent is empty, anything else must be a list. */
const optList = <T>(item: z.ZodType<T>) =>
  listOf(item)
    .nullish()
    .transform((items): T[] => items ?? []);
const optObject = <T>(shape: z.ZodType<T>) =>
  shape.nullish().transform((value): T | null => value ?? null);

const keyValues = optList(z.object({ key: text, value: optText }));
const strings = optList(text);

const variationFields = { sku: text, qty: optNum, ean: optText, images: strings, specifications: keyValues };
const variationShape = z.object(variationFields);

/** `{variation, product: {sku}}`, as GET and (liberally) PUT answer. */
const variationEnvelope = z
  .object({ variation: variationShape, product: optObject(z.object({ sku: optText })) })
  .transform(({ variation, product }): VariationDto => ({ ...variation, product_sku: product?.sku ?? null }));

const productShape = z
  .object({
    sku: text,
    name: optText,
    description: optText,
    status: optText,
    qty: optNum,
    price: optNum,
    promotional_price: optNum,
    cost: optNum,
    weight: optNum,
    height: optNum,
    width: optNum,
    length: optNum,
    brand: optText,
    ean: optText,
    nbm: optText,
    // The real product search no longer returns categories (docs/services/marketplace.md).
    categories: optList(z.object({ code: optText, name: optText })),
    images: strings,
    specifications: keyValues,
    variations: optList(variationShape),
    variation_attributes: strings,
  })
  // Field by field: a rest pattern and spreads over zod's output cost some 6 µs a product, two thirds
  // of reading it (measured alone on the benchmark's product); naming each field, under 1 µs.
  .transform(
    (product): ProductDto => ({
      sku: product.sku,
      name: product.name,
      description: product.description,
      status: product.status,
      qty: product.qty,
      price: product.price,
      cost: product.cost,
      weight: product.weight,
      height: product.height,
      width: product.width,
      length: product.length,
      brand: product.brand,
      ean: product.ean,
      nbm: product.nbm,
      categories: product.categories,
      images: product.images,
      specifications: product.specifications,
      variations: product.variations.map(
        (variation): VariationDto => ({ sku: variation.sku, qty: variation.qty, ean: variation.ean, images: variation.images, specifications: variation.specifications, product_sku: product.sku }),
      ),
      promotionalPrice: product.promotional_price,
      variationAttributes: product.variation_attributes,
    }),
  );

// A product as the service usually sends it, read by hand (`quick`): the same value as
// `productShape` gives, which reads anything else.
const quickKeyValue = (value: unknown) => {
  const pair = quick.object(value);
  return { key: quick.text(pair.key), value: quick.optText(pair.value) };
};

function quickProduct(body: unknown): ProductDto {
  const product = quick.object(body);
  const sku = quick.text(product.sku);
  return {
    sku,
    name: quick.optText(product.name),
    description: quick.optText(product.description),
    status: quick.optText(product.status),
    qty: quick.optNum(product.qty),
    price: quick.optNum(product.price),
    cost: quick.optNum(product.cost),
    weight: quick.optNum(product.weight),
    height: quick.optNum(product.height),
    width: quick.optNum(product.width),
    length: quick.optNum(product.length),
    brand: quick.optText(product.brand),
    ean: quick.optText(product.ean),
    nbm: quick.optText(product.nbm),
    categories: quick.list(product.categories, (value) => {
      const category = quick.object(value);
      return { code: quick.optText(category.code), name: quick.optText(category.name) };
    }),
    images: quick.list(product.images, quick.text),
    specifications: quick.list(product.specifications, quickKeyValue),
    variations: quick.list(product.variations, (value): VariationDto => {
      const variation = quick.object(value);
      return {
        sku: quick.text(variation.sku),
        qty: quick.optNum(variation.qty),
        ean: quick.optText(variation.ean),
        images: quick.list(variation.images, quick.text),
        specifications: quick.list(variation.specifications, quickKeyValue),
        product_sku: sku,
      };
    }),
    promotionalPrice: quick.optNum(product.promotional_price),
    variationAttributes: quick.list(product.variation_attributes, quick.text),
  };
}

const questionShape = z
  .object({
    id: identifier,
    answered: optBool,
    message: optText,
    answer: optObject(z.object({ message: optText, created_on: optText }).transform(({ created_on, ...answer }): QuestionAnswerDto => ({ ...answer, createdOn: created_on }))),
    name: optText,
    sku: optText,
    tags: strings,
    created_on: optText,
    customer: optObject(z.object({ name: optText })),
  })
  .transform(({ created_on, ...question }): QuestionDto => ({ ...question, createdOn: created_on }));

const plpShape = z.object({
  id: identifier,
  expiration_date: z.unknown().transform(calendarDate),
  orders: listOf(z.object({ code: text, customer: optText, value: optNum })),
});

const freightOptionShape = z
  // Amounts arrive as text ("19.90").
  .object({ shipping_method: optText, courier_name: optText, quantity: optNum, amount: optNum, delivery_time: optNum })
  .transform(
    ({ shipping_method, courier_name, delivery_time, ...option }): FreightOptionDto => ({
      ...option,
      shippingMethod: shipping_method,
      courierName: courier_name,
      deliveryTime: delivery_time,
    }),
  );

const freightShape = z
  .object({
    account: optObject(z.object({ id: optText, name: optText })),
    created_at: optText,
    sale_system: optText,
    request: optObject(z.object({ path: optText, zipcode: optText, products: optList(z.object({ sku: optText, qty: optNum })) })),
    response: optObject(
      z.object({
        render: optText,
        products: optList(
          z
            .object({ sku: optText, category_names: strings, freights: optList(freightOptionShape) })
            .transform(({ category_names, ...product }): FreightResponseProductDto => ({ ...product, categoryNames: category_names })),
        ),
      }),
    ),
  })
  .transform(({ created_at, sale_system, ...freight }): FreightDto => ({ ...freight, createdAt: created_at, saleSystem: sale_system }));

// The element shape is not documented: a bare string, or an object naming its code somehow.
const statusTypeShape = z.union([
  text.transform((code): StatusTypeDto => ({ code, name: code })),
  z
    .object({ code: optText, id: optText, status: optText, value: optText, key: optText, name: optText, description: optText, label: optText, title: optText })
    .transform((entry, context): StatusTypeDto => {
      const code = entry.code ?? entry.id ?? entry.status ?? entry.value ?? entry.key;
      if (code === null) {
        context.addIssue({ code: 'custom', message: 'a status type names no code', path: ['code'] });
        return z.NEVER;
      }
      return { code, name: entry.name ?? entry.description ?? entry.label ?? entry.title };
    }),
]);

const symbolicReturnShape = z
  .object({
    access_key: optText,
    number: optText,
    series: optText,
    issued_at: optText,
    cd_vat_number: optText,
    delivery: optText,
    order_access_key: optText,
    xml: optText,
  })
  .transform(
    ({ access_key, issued_at, cd_vat_number, order_access_key, ...invoice }): SymbolicReturnDto => ({
      ...invoice,
      accessKey: access_key,
      issuedAt: issued_at,
      cdVatNumber: cd_vat_number,
      orderAccessKey: order_access_key,
    }),
  );

const stockShape = z.object({
  stock: listOf(
    // Quantities arrive as text.
    z
      .object({ sku: text, recipient_document: optText, deposit_type: optText, stock: optNum, reserved_stock: optNum })
      .transform(
        ({ recipient_document, deposit_type, reserved_stock, ...entry }): StockDto => ({
          ...entry,
          recipientDocument: recipient_document,
          depositType: deposit_type,
          reservedStock: reserved_stock,
        }),
      ),
    LIMITS.stockPerPage,
  ),
});

/** The product search's largest page: `per_page` "default and maximum 100" (docs/services/marketplace.md, The real service, row 7). */
const PRODUCTS_PER_PAGE = 100;

/** Every answer the client reads, by what it holds. */
export const ANSWERS = {
  labelGroups: z.object({ plp: listOf(plpShape) }).transform((body) => body.plp),
  message: z.object({ message: optText }).nullish().transform((body) => ({ message: body?.message ?? null })),
  questions: z.object({ questions: listOf(questionShape), cursor: optText }),
  question: questionShape,
  variation: variationEnvelope,
  stock: stockShape.transform((body) => body.stock),
  // The body is not documented: a bare list, or one under a key.
  symbolicReturns: z.union([
    listOf(symbolicReturnShape),
    z.object({ nfe: listOf(symbolicReturnShape) }).transform((body) => body.nfe),
    z.object({ nfes: listOf(symbolicReturnShape) }).transform((body) => body.nfes),
    z.object({ invoices: listOf(symbolicReturnShape) }).transform((body) => body.invoices),
    z.object({ symbolic_returns: listOf(symbolicReturnShape) }).transform((body) => body.symbolic_returns),
  ]),
  products: z.object({ products: listOf(productShape, PRODUCTS_PER_PAGE), total: optNum, next: optText }),
  product: productShape,
  // The documented example shows no answer: the product bare or under `product`.
  createdProduct: z.union([z.object({ product: productShape }).transform((body) => body.product), productShape]),
  freights: z.object({ freight: listOf(freightShape) }).transform((body) => body.freight),
  statusTypes: z.union([listOf(statusTypeShape), z.object({ status_types: listOf(statusTypeShape) }).transform((body) => body.status_types)]),
};

// A page of products as the service usually sends it, read by hand (the benchmark's `products10`).
function quickProducts(body: unknown): z.output<typeof ANSWERS.products> {
  const page = quick.object(body);
  return { products: quick.array(page.products, PRODUCTS_PER_PAGE).map(quickProduct), total: quick.optNum(page.total), next: quick.optText(page.next) };
}

/** The quick readers with the shapes they mirror, for the test that holds one to the other. */
export const QUICK_READERS = { product: { shape: productShape, read: quickProduct }, products: { shape: ANSWERS.products, read: quickProducts } };

const read = <T>(schema: z.ZodType<T>, response: RestResponse, operation: string, quickly?: (body: unknown) => T): T =>
  parseAnswer(schema, response.body, { service: SERVICE, operation, status: response.status }, quickly);

/** Whether a body undocumented or optional holds anything to read (an empty 200 or 204 holds nothing). */
const holds = (body: unknown, key: string): boolean => Boolean(body && typeof body === 'object' && key in body);

/** The PLP id inside `Plp 7003 agrupada com sucesso.`, or a field should the service ever send one. */
export function plpIdOf(body: unknown): string | undefined {
  const value = asRecord(body);
  if (value.plp_id !== undefined || value.id !== undefined) return String(value.plp_id ?? value.id);
  const message = typeof value.message === 'string' ? value.message : typeof body === 'string' ? body : '';
  return /\bplp\D{0,5}(\d+)/i.exec(message)?.[1];
}

/**
 * What every call of one caller's client is built with. Methods of an object made once per client,
 * not functions declared in its factory: tsx, which keeps function names, renames each of those
 * with a property definition every time the factory runs, once per request.
 */
function marketplaceCalls(options: MarketplaceClientOptions, secrets: readonly string[]) {
  const { transport, credential, scope } = options;
  const calls = {
    authenticated(call: Omit<RestCall, 'secrets'>, { identity, account }: AuthProfile = FULL): RestCall {
      const { email, apiKey, accountKey, userToken } = credential;
      const headers: Record<string, string> = {};
      if (apiKey && (email || identity === 'apiKey')) {
        headers['x-api-key'] = apiKey;
        if (email) headers['x-user-email'] = email;
      } else if (userToken) {
        headers['x-user-token'] = userToken;
      } else {
        const wanted = identity === 'full' ? `${CREDENTIAL_HEADERS.email} and ${CREDENTIAL_HEADERS.apiKey}` : CREDENTIAL_HEADERS.apiKey;
        throw missingCredential(SERVICE, `${wanted} (or ${CREDENTIAL_HEADERS.userToken})`);
      }
      if (account === 'required' && !accountKey) throw missingCredential(SERVICE, CREDENTIAL_HEADERS.accountKey);
      if (account !== 'absent' && accountKey) headers['x-accountmanager-key'] = accountKey;
      // The fixed property first: a literal that starts with a spread makes V8 clone the shape of `call`,
      // which differs at every call site, at about four times the cost per upstream call.
      return { secrets, scope, ...call, headers: { ...call.headers, ...headers } };
    },

    /** An upstream page token may reach a client inside our cursor only if it holds no credential. */
    vetted(token: string | null): string | null {
      if (token === null) return null;
      if (holdsCredential(token, secrets)) throw upstreamContractError(SERVICE, 'the next-page token carries a credential, so it cannot be handed out as a cursor');
      return token;
    },

    /** The `next` URL as a path below the base URL: a cursor can then only ever reach this service. */
    nextPath(next: unknown): string | null {
      if (typeof next !== 'string' || next.trim() === '') return null;
      const base = new URL(options.apiUrl);
      const prefix = base.pathname.replace(/\/+$/, '');
      const url = URL.parse(next, `${base.origin}${prefix}/`);
      if (!url) throw upstreamContractError(SERVICE, 'the next-page URL does not parse');
      if (url.origin !== base.origin || !url.pathname.startsWith(`${prefix}/`)) throw upstreamContractError(SERVICE, 'the next-page URL points outside the service');
      return calls.vetted(`${url.pathname.slice(prefix.length)}${url.search}`);
    },

    async putVariation(operation: string, sku: string, variation: Record<string, unknown>): Promise<VariationDto | null> {
      const response = await transport.request(calls.authenticated({ operation, method: 'PUT', path: restPath('/variations/:sku', { sku }), body: { json: { variation } } }));
      // The answer is not documented: the variation when it holds one, else the resolver reads it back.
      return holds(response.body, 'variation') ? read(ANSWERS.variation, response, operation) : null;
    },
  };
  return calls;
}

/**
 * Every marketplace endpoint, called from here and nowhere else. Credentials travel as the
 * headers the spec names, each only where its Authentication table asks for it.
 */
export function createMarketplaceClient(options: MarketplaceClientOptions): MarketplaceClient {
  const { transport, credential, marketplace, multipartThresholdBytes } = options;
  const shipments = restPath('/shipments/:marketplace/', { marketplace });
  const fulfillment = restPath('/fulfillment/:marketplace', { marketplace });
  const secrets = [credential.apiKey, credential.accountKey, credential.userToken, credential.email].filter((value): value is string => Boolean(value));

  const { authenticated, vetted, nextPath, putVariation } = marketplaceCalls(options, secrets);

  return {
    async listLabelGroups() {
      const response = await transport.request(authenticated({ operation: 'listLabelGroups', method: 'GET', path: shipments }));
      return read(ANSWERS.labelGroups, response, 'listLabelGroups');
    },

    async groupOrders(orderCodes) {
      // Documented as 200; the real service also answers 201. Either is a 2xx to the transport.
      const response = await transport.request(authenticated({ operation: 'groupOrders', method: 'POST', path: shipments, body: { json: { order_remote_codes: orderCodes } } }));
      const named = plpIdOf(response.body ?? response.text);
      // It goes back in paths and into errors: an id no path segment may hold is no id.
      const id = named && named.length <= MAX_SEGMENT_CHARS ? named : undefined;
      if (!id) {
        // A 2xx: the orders are grouped now (grouping them again is refused), though no id says where.
        throw graphError(`${SERVICE}: the orders were grouped but the answer names no PLP id. Do not send the mutation again: find the new PLP with labelGroups`, {
          code: ErrorCode.UpstreamError,
          service: SERVICE,
          status: response.status,
          writeOutcome: WriteOutcome.Applied,
        });
      }
      return { id, message: typeof response.body === 'object' ? read(ANSWERS.message, response, 'groupOrders').message : null };
    },

    async ungroupLabelGroup(id) {
      const response = await transport.request(authenticated({ operation: 'ungroupLabelGroup', method: 'DELETE', path: shipments, body: { json: { plp_id: id } } }));
      return read(ANSWERS.message, response, 'ungroupLabelGroup');
    },

    async getLabels(id) {
      const response = await transport.lookup(authenticated({ operation: 'getLabels', method: 'GET', path: `${shipments}view`, query: { plp_id: id } }));
      return response ? (response.body ?? null) : null;
    },

    streamLabelsPdf(id) {
      return transport.stream(authenticated({ operation: 'getLabelsPdf', method: 'GET', path: `${shipments}view`, query: { plp_id: id }, accept: 'application/pdf' }));
    },

    async listQuestions({ platform, status, cursor }) {
      // With a cursor the service ignores the filters; they are sent anyway, as platform is documented as required.
      const response = await transport.request(
        authenticated({ operation: 'listQuestions', method: 'GET', path: '/questions', query: { platform, status, cursor }, ...(cursor ? { followsCursor: true } : {}) }),
      );
      const { questions, cursor: next } = read(ANSWERS.questions, response, 'listQuestions');
      return { questions, cursor: vetted(next === '' ? null : next) };
    },

    async getQuestion(id) {
      const response = await transport.lookup(authenticated({ operation: 'getQuestion', method: 'GET', path: restPath('/questions/:id', { id }) }));
      return response ? read(ANSWERS.question, response, 'getQuestion') : null;
    },

    async deleteQuestion(id) {
      await transport.request(authenticated({ operation: 'deleteQuestion', method: 'DELETE', path: restPath('/questions/:id', { id }) }));
    },

    async answerQuestion(id, answer) {
      const form = new FormData();
      form.append('answer', answer);
      const response = await transport.request(authenticated({ operation: 'answerQuestion', method: 'POST', path: restPath('/questions/:id/answer', { id }), body: { multipart: form } }));
      return holds(response.body, 'id') ? read(ANSWERS.question, response, 'answerQuestion') : null;
    },

    async getVariation(sku) {
      const response = await transport.lookup(authenticated({ operation: 'getVariation', method: 'GET', path: restPath('/variations/:sku', { sku }) }));
      return response ? read(ANSWERS.variation, response, 'getVariation') : null;
    },

    updateVariation(sku, changes) {
      return putVariation('updateVariation', sku, { ...changes });
    },

    updateVariationPrice(sku, price) {
      return putVariation('updateVariationPrice', sku, { specifications: [{ key: 'price', value: price }] });
    },

    async deleteVariation(sku) {
      await transport.request(authenticated({ operation: 'deleteVariation', method: 'DELETE', path: restPath('/variations/:sku', { sku }) }));
    },

    async sendInvoice({ recipientDocument, xml }) {
      const path = `${fulfillment}/delivery`;
      const profile: AuthProfile = { identity: 'full', account: 'optional' };
      if (Buffer.byteLength(xml) <= multipartThresholdBytes) {
        await transport.request(authenticated({ operation: 'sendInvoice', method: 'POST', path, body: { json: { recipient_document: recipientDocument, invoice: { payload: xml } } } }, profile));
        return { via: 'json' };
      }
      const form = new FormData();
      form.append('recipient_document', recipientDocument);
      form.append('invoice[payload]', new Blob([xml], { type: 'application/xml' }), 'invoice.xml');
      await transport.request(authenticated({ operation: 'sendInvoiceFile', method: 'POST', path, body: { multipart: form } }, profile));
      return { via: 'multipart' };
    },

    async listStock({ recipientDocument, sku, page, perPage }) {
      const response = await transport.request(
        authenticated(
          { operation: 'listStock', method: 'GET', path: `${fulfillment}/stock`, query: { recipient_document: recipientDocument, sku, page, per_page: perPage } },
          { identity: 'full', account: 'absent' },
        ),
      );
      return read(ANSWERS.stock, response, 'listStock');
    },

    async listSymbolicReturns({ cdVatNumber, delivery, orderAccessKey }) {
      const response = await transport.request(
        authenticated({ operation: 'listSymbolicReturns', method: 'GET', path: `${fulfillment}/delivery/nfe`, query: { cd_vat_number: cdVatNumber, delivery, order_access_key: orderAccessKey } }),
      );
      return read(ANSWERS.symbolicReturns, response, 'listSymbolicReturns');
    },

    async listProducts(params) {
      let call: Omit<RestCall, 'secrets'>;
      if (params.next !== undefined) {
        // Only a path below the base URL is ever followed, whatever a cursor claims, and only under the filter asked for.
        const url = new URL(params.next, 'http://next.invalid');
        const filtered = url.searchParams.get('filters[status]');
        if (url.origin !== 'http://next.invalid' || url.pathname !== '/products' || (filtered !== null && filtered !== (params.status ?? ''))) {
          throw badUserInput('after', 'is not a cursor this graph issued for this list');
        }
        call = { operation: 'listProductsNext', method: 'GET', path: `${url.pathname}${url.search}`, followsCursor: true };
      } else {
        call = { operation: 'listProducts', method: 'GET', path: '/products', query: { 'filters[status]': params.status } };
      }
      const response = await transport.request(authenticated(call));
      const { products, total, next } = read(ANSWERS.products, response, call.operation, quickProducts);
      return { products, total, next: nextPath(next) };
    },

    async getProduct(sku) {
      const response = await transport.lookup(authenticated({ operation: 'getProduct', method: 'GET', path: restPath('/products/:sku', { sku }) }));
      return response ? read(ANSWERS.product, response, 'getProduct', quickProduct) : null;
    },

    async createProduct(product) {
      // The documented example creates products on another host, the spec's `{api_url}`.
      const response = await transport.request(
        authenticated({ operation: 'createProduct', method: 'POST', path: `${options.productsApiUrl.replace(/\/+$/, '')}/products`, body: { json: { product } } }),
      );
      // The answer is not documented: the product when it holds one, else the resolver reads it back.
      return holds(response.body, 'sku') || holds(response.body, 'product') ? read(ANSWERS.createdProduct, response, 'createProduct') : null;
    },

    async listFreights() {
      const response = await transport.request(authenticated({ operation: 'listFreights', method: 'GET', path: '/freights' }, { identity: 'apiKey', account: 'required' }));
      return read(ANSWERS.freights, response, 'listFreights');
    },

    async listStatusTypes() {
      const response = await transport.request(authenticated({ operation: 'listStatusTypes', method: 'GET', path: '/status_types' }));
      return read(ANSWERS.statusTypes, response, 'listStatusTypes');
    },
  };
}
