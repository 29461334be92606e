import { SERVICE_ENTRY } from '../../lib/services.ts';
import { badUserInput, missingCredential, upstreamContractError } from '../kit/errors.ts';
import { holdsCredential } from '../kit/cursors.ts';
import { asArray, asBoolean, asNumber, asRecord, asStrings, asText } from '../kit/envelopes.ts';
import type { RestCall, RestTransport, StreamResponse } from '../kit/transport.ts';

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
  promotional_price: number | null;
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
  variation_attributes: string[];
}

export interface QuestionAnswerDto {
  message: string | null;
  created_on: string | null;
}

export interface QuestionDto {
  id: string;
  answered: boolean | null;
  message: string | null;
  answer: QuestionAnswerDto | null;
  name: string | null;
  sku: string | null;
  tags: string[];
  created_on: string | null;
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
  recipient_document: string | null;
  deposit_type: string | null;
  stock: number | null;
  reserved_stock: number | null;
}

export interface SymbolicReturnDto {
  access_key: string | null;
  number: string | null;
  series: string | null;
  issued_at: string | null;
  cd_vat_number: string | null;
  delivery: string | null;
  order_access_key: string | null;
  xml: string | null;
}

export interface FreightOptionDto {
  shipping_method: string | null;
  courier_name: string | null;
  quantity: number | null;
  amount: number | null;
  delivery_time: number | null;
}

export interface FreightRequestProductDto {
  sku: string | null;
  qty: number | null;
}

export interface FreightResponseProductDto {
  sku: string | null;
  category_names: string[];
  freights: FreightOptionDto[];
}

export interface FreightDto {
  account: { id: string | null; name: string | null } | null;
  created_at: string | null;
  sale_system: string | null;
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
  listProducts(params: { status?: string } | { next: string }): Promise<ProductPageDto>;
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
}

/** Which credentials an endpoint wants: the spec's Authentication table. */
interface AuthProfile {
  /** `apiKey`: X-User-Email may be left out (GET /freights). */
  identity: 'full' | 'apiKey';
  account: 'required' | 'optional' | 'absent';
}
const FULL: AuthProfile = { identity: 'full', account: 'required' };

const segment = encodeURIComponent;

/** `2026-12-01`, from a date or a date-time. */
function calendarDate(value: unknown): string | null {
  const match = typeof value === 'string' ? /^\d{4}-\d{2}-\d{2}/.exec(value) : null;
  return match ? match[0] : null;
}

function toKeyValues(value: unknown): KeyValueDto[] {
  return asArray(value)
    .map(asRecord)
    .filter((entry) => entry.key !== undefined)
    .map((entry) => ({ key: String(entry.key), value: asText(entry.value) }));
}

function toVariation(raw: unknown, productSku: string | null): VariationDto {
  const variation = asRecord(raw);
  return {
    sku: String(variation.sku ?? ''),
    qty: asNumber(variation.qty),
    ean: asText(variation.ean),
    images: asStrings(variation.images),
    specifications: toKeyValues(variation.specifications),
    product_sku: productSku,
  };
}

/** `{variation, product: {sku}}`, as GET and (liberally) PUT answer; null when the body holds no variation. */
function toVariationEnvelope(body: unknown): VariationDto | null {
  const envelope = asRecord(body);
  if (!envelope.variation || typeof envelope.variation !== 'object') return null;
  return toVariation(envelope.variation, asText(asRecord(envelope.product).sku));
}

function toProduct(raw: unknown): ProductDto {
  const product = asRecord(raw);
  const sku = String(product.sku ?? '');
  return {
    sku,
    name: asText(product.name),
    description: asText(product.description),
    status: asText(product.status),
    qty: asNumber(product.qty),
    price: asNumber(product.price),
    promotional_price: asNumber(product.promotional_price),
    cost: asNumber(product.cost),
    weight: asNumber(product.weight),
    height: asNumber(product.height),
    width: asNumber(product.width),
    length: asNumber(product.length),
    brand: asText(product.brand),
    ean: asText(product.ean),
    nbm: asText(product.nbm),
    categories: asArray(product.categories).map((item) => ({ code: asText(asRecord(item).code), name: asText(asRecord(item).name) })),
    images: asStrings(product.images),
    specifications: toKeyValues(product.specifications),
    variations: asArray(product.variations).map((item) => toVariation(item, sku)),
    variation_attributes: asStrings(product.variation_attributes),
  };
}

function toQuestion(raw: unknown): QuestionDto {
  const question = asRecord(raw);
  const answer = question.answer && typeof question.answer === 'object' ? asRecord(question.answer) : undefined;
  const customer = question.customer && typeof question.customer === 'object' ? asRecord(question.customer) : undefined;
  return {
    id: String(question.id ?? ''),
    answered: asBoolean(question.answered),
    message: asText(question.message),
    answer: answer ? { message: asText(answer.message), created_on: asText(answer.created_on) } : null,
    name: asText(question.name),
    sku: asText(question.sku),
    tags: asStrings(question.tags),
    created_on: asText(question.created_on),
    customer: customer ? { name: asText(customer.name) } : null,
  };
}

function toPlp(raw: unknown): PlpDto {
  const plp = asRecord(raw);
  return {
    id: String(plp.id ?? ''),
    expiration_date: calendarDate(plp.expiration_date),
    orders: asArray(plp.orders).map((item) => ({ code: String(asRecord(item).code ?? ''), customer: asText(asRecord(item).customer), value: asNumber(asRecord(item).value) })),
  };
}

function toFreight(raw: unknown): FreightDto {
  const freight = asRecord(raw);
  const account = freight.account ? asRecord(freight.account) : undefined;
  const request = freight.request ? asRecord(freight.request) : undefined;
  const response = freight.response ? asRecord(freight.response) : undefined;
  return {
    account: account ? { id: asText(account.id), name: asText(account.name) } : null,
    created_at: asText(freight.created_at),
    sale_system: asText(freight.sale_system),
    request: request
      ? { path: asText(request.path), zipcode: asText(request.zipcode), products: asArray(request.products).map((item) => ({ sku: asText(asRecord(item).sku), qty: asNumber(asRecord(item).qty) })) }
      : null,
    response: response
      ? {
          render: asText(response.render),
          products: asArray(response.products).map((item) => ({
            sku: asText(asRecord(item).sku),
            category_names: asStrings(asRecord(item).category_names),
            freights: asArray(asRecord(item).freights).map((option) => {
              const entry = asRecord(option);
              // Amounts arrive as text ("19.90").
              return { shipping_method: asText(entry.shipping_method), courier_name: asText(entry.courier_name), quantity: asNumber(entry.quantity), amount: asNumber(entry.amount), delivery_time: asNumber(entry.delivery_time) };
            }),
          })),
        }
      : null,
  };
}

function toStatusType(raw: unknown): StatusTypeDto {
  // The element shape is not documented: a bare string, or an object naming its code somehow.
  if (typeof raw === 'string' || typeof raw === 'number') return { code: String(raw), name: String(raw) };
  const entry = asRecord(raw);
  const code = entry.code ?? entry.id ?? entry.status ?? entry.value ?? entry.key ?? '';
  return { code: String(code), name: asText(entry.name ?? entry.description ?? entry.label ?? entry.title) };
}

function toSymbolicReturn(raw: unknown): SymbolicReturnDto {
  const entry = asRecord(raw);
  return {
    access_key: asText(entry.access_key),
    number: asText(entry.number),
    series: asText(entry.series),
    issued_at: asText(entry.issued_at),
    cd_vat_number: asText(entry.cd_vat_number),
    delivery: asText(entry.delivery),
    order_access_key: asText(entry.order_access_key),
    xml: asText(entry.xml),
  };
}

/** The PLP id inside `Plp 7003 agrupada com sucesso.`, or a field should the service ever send one. */
export function plpIdOf(body: unknown): string | undefined {
  const value = asRecord(body);
  if (value.plp_id !== undefined || value.id !== undefined) return String(value.plp_id ?? value.id);
  const message = typeof value.message === 'string' ? value.message : typeof body === 'string' ? body : '';
  return /\bplp\D{0,5}(\d+)/i.exec(message)?.[1];
}

/**
 * Every marketplace endpoint, called from here and nowhere else. Credentials travel as the
 * headers the spec names, each only where its Authentication table asks for it.
 */
export function createMarketplaceClient(options: MarketplaceClientOptions): MarketplaceClient {
  const { transport, credential, marketplace, multipartThresholdBytes } = options;
  const shipments = `/shipments/${segment(marketplace)}/`;
  const fulfillment = `/fulfillment/${segment(marketplace)}`;
  const secrets = [credential.apiKey, credential.accountKey, credential.userToken, credential.email].filter((value): value is string => Boolean(value));

  function authenticated(call: Omit<RestCall, 'secrets'>, { identity, account }: AuthProfile = FULL): RestCall {
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
    return { secrets, ...call, headers: { ...call.headers, ...headers } };
  }

  /** An upstream page token may reach a client inside our cursor only if it holds no credential. */
  function vetted(token: string | null): string | null {
    if (token === null) return null;
    if (holdsCredential(token, secrets)) throw upstreamContractError(SERVICE, 'the next-page token carries a credential, so it cannot be handed out as a cursor');
    return token;
  }

  /** The `next` URL as a path below the base URL: a cursor can then only ever reach this service. */
  function nextPath(next: unknown): string | null {
    if (typeof next !== 'string' || next.trim() === '') return null;
    const base = new URL(options.apiUrl);
    const prefix = base.pathname.replace(/\/+$/, '');
    const url = new URL(next, `${base.origin}${prefix}/`);
    if (url.origin !== base.origin || !url.pathname.startsWith(`${prefix}/`)) throw upstreamContractError(SERVICE, 'the next-page URL points outside the service');
    return vetted(`${url.pathname.slice(prefix.length)}${url.search}`);
  }

  async function putVariation(operation: string, sku: string, variation: Record<string, unknown>): Promise<VariationDto | null> {
    const response = await transport.request(authenticated({ operation, method: 'PUT', path: `/variations/${segment(sku)}`, body: { json: { variation } } }));
    return toVariationEnvelope(response.body);
  }

  return {
    async listLabelGroups() {
      const response = await transport.request(authenticated({ operation: 'listLabelGroups', method: 'GET', path: shipments }));
      return asArray(asRecord(response.body).plp).map(toPlp);
    },

    async groupOrders(orderCodes) {
      // Documented as 200; the real service also answers 201. Either is a 2xx to the transport.
      const response = await transport.request(authenticated({ operation: 'groupOrders', method: 'POST', path: shipments, body: { json: { order_remote_codes: orderCodes } } }));
      const id = plpIdOf(response.body ?? response.text);
      if (!id) throw upstreamContractError(SERVICE, 'the orders were grouped but the answer names no PLP id', response.status);
      return { id, message: asText(asRecord(response.body).message) };
    },

    async ungroupLabelGroup(id) {
      const response = await transport.request(authenticated({ operation: 'ungroupLabelGroup', method: 'DELETE', path: shipments, body: { json: { plp_id: id } } }));
      return { message: asText(asRecord(response.body).message) };
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
      const body = asRecord(response.body);
      const next = typeof body.cursor === 'string' && body.cursor !== '' ? body.cursor : null;
      return { questions: asArray(body.questions).map(toQuestion), cursor: vetted(next) };
    },

    async getQuestion(id) {
      const response = await transport.lookup(authenticated({ operation: 'getQuestion', method: 'GET', path: `/questions/${segment(id)}` }));
      return response ? toQuestion(response.body) : null;
    },

    async deleteQuestion(id) {
      await transport.request(authenticated({ operation: 'deleteQuestion', method: 'DELETE', path: `/questions/${segment(id)}` }));
    },

    async answerQuestion(id, answer) {
      const form = new FormData();
      form.append('answer', answer);
      const response = await transport.request(authenticated({ operation: 'answerQuestion', method: 'POST', path: `/questions/${segment(id)}/answer`, body: { multipart: form } }));
      return asRecord(response.body).id !== undefined ? toQuestion(response.body) : null;
    },

    async getVariation(sku) {
      const response = await transport.lookup(authenticated({ operation: 'getVariation', method: 'GET', path: `/variations/${segment(sku)}` }));
      return response ? toVariationEnvelope(response.body) : null;
    },

    updateVariation: (sku, changes) => putVariation('updateVariation', sku, { ...changes }),

    updateVariationPrice: (sku, price) => putVariation('updateVariationPrice', sku, { specifications: [{ key: 'price', value: price }] }),

    async deleteVariation(sku) {
      await transport.request(authenticated({ operation: 'deleteVariation', method: 'DELETE', path: `/variations/${segment(sku)}` }));
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
      return asArray(asRecord(response.body).stock).map((raw) => {
        const entry = asRecord(raw);
        // Quantities arrive as text.
        return { sku: String(entry.sku ?? ''), recipient_document: asText(entry.recipient_document), deposit_type: asText(entry.deposit_type), stock: asNumber(entry.stock), reserved_stock: asNumber(entry.reserved_stock) };
      });
    },

    async listSymbolicReturns({ cdVatNumber, delivery, orderAccessKey }) {
      const response = await transport.request(
        authenticated({ operation: 'listSymbolicReturns', method: 'GET', path: `${fulfillment}/delivery/nfe`, query: { cd_vat_number: cdVatNumber, delivery, order_access_key: orderAccessKey } }),
      );
      // The body is not documented: a bare list, or one under a key.
      const body = asRecord(response.body);
      const list = Array.isArray(response.body) ? response.body : asArray(body.nfe ?? body.nfes ?? body.invoices ?? body.symbolic_returns);
      return list.map(toSymbolicReturn);
    },

    async listProducts(params) {
      let call: Omit<RestCall, 'secrets'>;
      if ('next' in params) {
        // Only a path below the base URL is ever followed, whatever a cursor claims.
        const url = new URL(params.next, 'http://next.invalid');
        if (url.origin !== 'http://next.invalid' || url.pathname !== '/products') throw badUserInput('after', 'is not a cursor this graph issued for this list');
        call = { operation: 'listProductsNext', method: 'GET', path: `${url.pathname}${url.search}`, followsCursor: true };
      } else {
        call = { operation: 'listProducts', method: 'GET', path: '/products', query: { 'filters[status]': params.status } };
      }
      const response = await transport.request(authenticated(call));
      const body = asRecord(response.body);
      return { products: asArray(body.products).map(toProduct), total: asNumber(body.total), next: nextPath(body.next) };
    },

    async getProduct(sku) {
      const response = await transport.lookup(authenticated({ operation: 'getProduct', method: 'GET', path: `/products/${segment(sku)}` }));
      return response ? toProduct(response.body) : null;
    },

    async createProduct(product) {
      // The documented example creates products on another host, the spec's `{api_url}`.
      const response = await transport.request(
        authenticated({ operation: 'createProduct', method: 'POST', path: `${options.productsApiUrl.replace(/\/+$/, '')}/products`, body: { json: { product } } }),
      );
      const body = asRecord(response.body);
      const created = body.product && typeof body.product === 'object' ? body.product : body;
      return asRecord(created).sku !== undefined ? toProduct(created) : null;
    },

    async listFreights() {
      const response = await transport.request(authenticated({ operation: 'listFreights', method: 'GET', path: '/freights' }, { identity: 'apiKey', account: 'required' }));
      return asArray(asRecord(response.body).freight).map(toFreight);
    },

    async listStatusTypes() {
      const response = await transport.request(authenticated({ operation: 'listStatusTypes', method: 'GET', path: '/status_types' }));
      const body = response.body;
      return (Array.isArray(body) ? body : asArray(asRecord(body).status_types)).map(toStatusType);
    },
  };
}
