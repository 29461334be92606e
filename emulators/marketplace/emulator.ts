import { createClock, type EmulatorClock, type EmulatorDefinition } from '../kit/emulator.ts';
import { fieldsBody, jsonBody } from '../kit/bodies.ts';
import type { Reply, Route, RouteRequest } from '../kit/router.ts';
import {
  CENTRES,
  DEMO_CREDENTIALS,
  PLATFORMS,
  QUESTION_STATUSES,
  seedMarketplace,
  type EmulatedProduct,
  type EmulatedQuestion,
  type EmulatedVariation,
  type MarketplaceState,
} from './data.ts';
import { makePdf } from './pdf.ts';
import { createThrottle } from '../kit/throttle.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';

/** A Rails-style login prompt: the spec says failed credentials answer 401 `{error: <login prompt text>}`. */
export const LOGIN_PROMPT = 'You need to sign in or sign up before continuing.';
const QUESTIONS_PAGE_SIZE = 20;
const PRODUCTS_PAGE_SIZE = 10;
/** The documented lifetime of a product list's `next` URL. */
export const NEXT_URL_LIFETIME_MS = 10 * 60 * 1000;
const DAY = 24 * 60 * 60 * 1000;

/**
 * Which credentials an endpoint wants (the spec's Authentication table). `x-user-token` may stand in
 * for X-User-Email and X-Api-Key everywhere.
 */
interface AuthProfile {
  /** `apiKey`: X-User-Email is optional (GET /freights). */
  identity: 'full' | 'apiKey';
  account: 'required' | 'optional' | 'absent';
}
const DEFAULT_AUTH: AuthProfile = { identity: 'full', account: 'required' };

export interface MarketplaceEmulatorOptions {
  /** The path segment that names the marketplace operator (the spec's `mkt`). @default 'mkt' */
  marketplace?: string;
  clock?: EmulatorClock;
  /** Refuse what goes over the published request rates with a 429, as the real service does (`EMULATOR_RATE_LIMITS`). @default true */
  rateLimits?: boolean;
}

export interface MarketplaceEmulator extends EmulatorDefinition {
  state(): MarketplaceState;
}

const errors = (status: number, ...messages: string[]): Reply => ({ status, body: { errors: messages } });
const isReply = (value: unknown): value is Reply => typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number';
const header = (request: RouteRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};
const record = (value: unknown): Record<string, unknown> | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);

function presentVariation({ sku, qty, ean, images, specifications }: EmulatedVariation) {
  return { sku, qty, ean, images, specifications };
}

function presentProduct(product: EmulatedProduct) {
  return { ...product, variations: product.variations.map(presentVariation) };
}

/** What the real service adds to a product: its links to marketplaces (the emulator's platform code) and a removal flag. */
function withRealProductFields(product: Record<string, unknown>): Record<string, unknown> {
  return { ...product, removed: false, associations: [{ platform: 'ALPHA', status: product.status === 'enabled' ? 'linked' : 'unlinked' }] };
}

/**
 * How the real service answers where it deviates from the spec (sources in
 * docs/services/marketplace.md): every failure as `{error: "message"}`, products carrying
 * `removed` and `associations`, and the product search without the `categories` array.
 */
function toRealDialect(reply: Reply, request: RouteRequest): Reply {
  const body = record(reply.body);
  if (!body) return reply;
  if (reply.status >= 400) {
    return Array.isArray(body.errors) && !('error' in body) ? { ...reply, body: { error: body.errors.map(String).join('; ') } } : reply;
  }
  if (request.method !== 'GET') return reply;
  if (request.path === '/products' && Array.isArray(body.products)) {
    return {
      ...reply,
      body: {
        ...body,
        products: body.products.map((product: unknown) => {
          const fields = record(product);
          if (!fields) return product;
          const { categories: _dropped, ...rest } = fields;
          return withRealProductFields(rest);
        }),
      },
    };
  }
  if (request.path.startsWith('/products/')) return { ...reply, body: withRealProductFields(body) };
  return reply;
}

function presentQuestion({ id, status, message, answer, name, sku, tags, created_on, customer }: EmulatedQuestion) {
  return { id, answered: status !== 'UNANSWERED', message, answer, name, sku, tags, created_on, customer };
}

export function createMarketplaceEmulator({ marketplace = 'mkt', clock = createClock(), rateLimits = true }: MarketplaceEmulatorOptions = {}): MarketplaceEmulator {
  let state = seedMarketplace(clock.now());
  // The real service answers 429 past its rates; its body is its one error form, `{error}` (the
  // real dialect), and its headers are not documented: `Retry-After` says when the window frees.
  const throttle = rateLimits
    ? createThrottle({ rates: PUBLISHED_RATES.marketplace!, now: clock.now, refusal: () => errors(429, 'Too many requests: the request limit for this endpoint was exceeded') })
    : undefined;
  const shipments = `/shipments/${marketplace}`;
  const fulfillment = `/fulfillment/${marketplace}`;

  function authenticate(request: RouteRequest, { identity, account }: AuthProfile = DEFAULT_AUTH): Reply | undefined {
    const refused: Reply = { status: 401, body: { error: LOGIN_PROMPT } };
    const userToken = header(request, 'x-user-token');
    if (userToken !== undefined) {
      if (userToken !== DEMO_CREDENTIALS.userToken) return refused;
    } else {
      if (header(request, 'x-api-key') !== DEMO_CREDENTIALS.apiKey) return refused;
      const email = header(request, 'x-user-email');
      if ((identity === 'full' || email !== undefined) && email !== DEMO_CREDENTIALS.email) return refused;
    }
    const accountKey = header(request, 'x-accountmanager-key');
    if (account === 'required' && accountKey !== DEMO_CREDENTIALS.accountKey) return refused;
    if (account === 'optional' && accountKey !== undefined && accountKey !== DEMO_CREDENTIALS.accountKey) return refused;
    return undefined;
  }

  /** Every operation needs an Accept header naming what it answers. */
  function accepts(request: RouteRequest, ...types: string[]): string | Reply {
    const accept = header(request, 'accept') ?? '';
    const found = types.find((type) => accept.includes(type));
    return found ?? { status: 406, body: { error: `Accept must be ${types.join(' or ')}` } };
  }

  /** Authentication, then the Accept check: what every route does first. */
  function guard(request: RouteRequest, profile?: AuthProfile): Reply | undefined {
    const refused = authenticate(request, profile);
    if (refused) return refused;
    const accept = accepts(request, 'application/json');
    return isReply(accept) ? accept : undefined;
  }

  /** A route that authenticates and checks Accept before doing anything. */
  const guarded =
    (handler: (request: RouteRequest) => Reply | Promise<Reply>, profile?: AuthProfile) =>
    (request: RouteRequest): Reply | Promise<Reply> =>
      guard(request, profile) ?? handler(request);

  const orderOf = (code: string) => state.orders.find((order) => order.code === code);
  const presentPlp = (plp: MarketplaceState['plps'][number]) => ({
    id: plp.id,
    expiration_date: plp.expiration_date,
    orders: plp.order_codes.map((code) => orderOf(code)).filter((order) => order !== undefined),
  });
  const variationOf = (sku: string) => {
    for (const product of state.products) {
      const variation = product.variations.find((candidate) => candidate.sku === sku);
      if (variation) return { product, variation };
    }
    return undefined;
  };

  function questionPage(platform: string, status: string | null, offset: number) {
    const matching = state.questions.filter((question) => question.platform === platform && (!status || question.status === status));
    const page = matching.slice(offset, offset + QUESTIONS_PAGE_SIZE);
    const more = offset + QUESTIONS_PAGE_SIZE < matching.length;
    // Stateless and opaque, like the real one: it remembers the first query's filters.
    const cursor = more ? Buffer.from(JSON.stringify({ platform, status, offset: offset + QUESTIONS_PAGE_SIZE })).toString('base64url') : null;
    return { questions: page.map(presentQuestion), cursor };
  }

  function readCursor(text: string): { platform: string; status: string | null; offset: number } | undefined {
    try {
      const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
      if (typeof parsed.platform === 'string' && typeof parsed.offset === 'number') {
        return { platform: parsed.platform, status: typeof parsed.status === 'string' ? parsed.status : null, offset: parsed.offset };
      }
    } catch {
      // falls through to undefined
    }
    return undefined;
  }

  /** A guarded route on one question, answering the documented 404 `{errors}` when there is none. */
  const onQuestion = (handler: (request: RouteRequest, question: EmulatedQuestion) => Reply | Promise<Reply>) =>
    guarded((request) => {
      const question = state.questions.find((candidate) => candidate.id === request.params.id);
      return question ? handler(request, question) : errors(404, 'Question not found');
    });

  /** A guarded route on one variation, answering 404 when the SKU names none. */
  const onVariation = (handler: (request: RouteRequest, found: { product: EmulatedProduct; variation: EmulatedVariation }) => Reply) =>
    guarded((request) => {
      const found = variationOf(request.params.sku!);
      return found ? handler(request, found) : errors(404, 'Variation not found');
    });
  const presentFound = ({ product, variation }: { product: EmulatedProduct; variation: EmulatedVariation }): Reply => ({
    status: 200,
    body: { variation: presentVariation(variation), product: { sku: product.sku } },
  });

  async function invoiceOf(request: RouteRequest): Promise<{ recipient: unknown; payload: unknown; via: 'json' | 'multipart' } | Reply> {
    const type = header(request, 'content-type') ?? '';
    if (type.startsWith('multipart/form-data')) {
      const fields = (await fieldsBody(request)) ?? {};
      const file = fields['invoice[payload]'];
      const payload = file instanceof Blob ? await file.text() : file;
      return { recipient: fields.recipient_document, payload, via: 'multipart' };
    }
    const body = record(jsonBody(request));
    if (!body) return errors(422, 'A JSON body {recipient_document, invoice: {payload}} is required');
    return { recipient: body.recipient_document, payload: record(body.invoice)?.payload, via: 'json' };
  }

  function productsPage(request: RouteRequest) {
    const status = request.query.get('filters[status]');
    const page = Number(request.query.get('page') ?? '1');
    if (!Number.isInteger(page) || page < 1) return errors(422, 'page must be a positive integer');
    if (page > 1) {
      // Later pages are reachable only through the `next` URL, which carries its expiry.
      const expires = Number(request.query.get('expires'));
      if (!Number.isFinite(expires)) return errors(422, 'Use the next URL of the previous page');
      if (clock.now() > expires) return { status: 410, body: { errors: ['This page link has expired: request the first page again'] } };
    }
    const matching = state.products.filter((product) => !status || product.status === status);
    const offset = (page - 1) * PRODUCTS_PAGE_SIZE;
    const items = matching.slice(offset, offset + PRODUCTS_PAGE_SIZE);
    let next: string | null = null;
    if (offset + PRODUCTS_PAGE_SIZE < matching.length) {
      const url = new URL('/products', `http://${header(request, 'host') ?? 'localhost'}`);
      if (status) url.searchParams.set('filters[status]', status);
      url.searchParams.set('page', String(page + 1));
      url.searchParams.set('expires', String(clock.now() + NEXT_URL_LIFETIME_MS));
      next = url.toString();
    }
    return { status: 200, body: { products: items.map(presentProduct), total: matching.length, next } };
  }

  function applyVariation(variation: EmulatedVariation, input: Record<string, unknown>): Reply | undefined {
    if ('qty' in input && (!Number.isInteger(input.qty) || (input.qty as number) < 0)) return errors(422, 'qty must be a non-negative integer');
    if ('ean' in input && typeof input.ean !== 'string') return errors(422, 'ean must be text');
    if ('images' in input && (!Array.isArray(input.images) || !input.images.every((image) => typeof image === 'string'))) return errors(422, 'images must be a list of URLs');
    const specifications = input.specifications;
    if (specifications !== undefined) {
      if (!Array.isArray(specifications)) return errors(422, 'specifications must be a list of {key, value}');
      for (const item of specifications) {
        const entry = record(item);
        if (!entry || typeof entry.key !== 'string' || typeof entry.value !== 'string') return errors(422, 'specifications must be a list of {key, value} of text');
        if (entry.key === 'price' && !/^\d+(\.\d+)?$/.test(entry.value)) return errors(422, 'price must be a decimal number sent as text, such as "49.90"');
      }
    }
    if (typeof input.qty === 'number') variation.qty = input.qty;
    if (typeof input.ean === 'string') variation.ean = input.ean;
    if (Array.isArray(input.images)) variation.images = input.images.map(String);
    for (const item of (specifications as { key: string; value: string }[] | undefined) ?? []) {
      const existing = variation.specifications.find((spec) => spec.key === item.key);
      if (existing) existing.value = item.value;
      else variation.specifications.push({ key: item.key, value: item.value });
    }
    return undefined;
  }

  function createProduct(request: RouteRequest): Reply {
    const input = record(record(jsonBody(request))?.product);
    if (!input) return errors(422, 'A JSON body {product: {...}} is required');
    if (typeof input.sku !== 'string' || input.sku.trim() === '') return errors(422, "sku can't be blank");
    if (input.sku.length > 25) return errors(422, 'sku is too long (maximum is 25 characters)');
    if (typeof input.name !== 'string' || input.name.trim() === '') return errors(422, "name can't be blank");
    if (state.products.some((product) => product.sku === input.sku) || variationOf(input.sku)) return errors(409, 'sku has already been taken');
    const numberOf = (name: string) => (typeof input[name] === 'number' ? (input[name] as number) : 0);
    const list = <T>(name: string): T[] => (Array.isArray(input[name]) ? (input[name] as T[]) : []);
    const product: EmulatedProduct = {
      sku: input.sku,
      name: input.name,
      description: typeof input.description === 'string' ? input.description : '',
      status: typeof input.status === 'string' ? input.status : 'enabled',
      qty: numberOf('qty'),
      price: numberOf('price'),
      promotional_price: numberOf('promotional_price'),
      cost: numberOf('cost'),
      weight: numberOf('weight'),
      height: numberOf('height'),
      width: numberOf('width'),
      length: numberOf('length'),
      brand: typeof input.brand === 'string' ? input.brand : '',
      ean: typeof input.ean === 'string' ? input.ean : '',
      nbm: typeof input.nbm === 'string' ? input.nbm : '',
      categories: list('categories'),
      images: list('images'),
      specifications: list('specifications'),
      variations: list<Record<string, unknown>>('variations').map((raw) => ({
        sku: String(raw.sku),
        qty: typeof raw.qty === 'number' ? raw.qty : 0,
        ean: typeof raw.ean === 'string' ? raw.ean : '',
        images: Array.isArray(raw.images) ? raw.images.map(String) : [],
        specifications: Array.isArray(raw.specifications) ? (raw.specifications as { key: string; value: string }[]) : [],
        connected: false,
      })),
      variation_attributes: list('variation_attributes'),
    };
    state.products.push(product);
    return { status: 201, body: presentProduct(product) };
  }

  function viewLabels(request: RouteRequest): Reply {
    const type = accepts(request, 'application/pdf', 'application/json');
    if (isReply(type)) return type;
    const id = request.query.get('plp_id');
    if (!id) return errors(422, 'plp_id is required');
    const plp = state.plps.find((candidate) => candidate.id === id);
    if (!plp) return errors(404, `PLP ${id} not found`);
    const labels = presentPlp(plp).orders.map((order, index) => ({
      order_code: order.code,
      customer: order.customer,
      tracking_code: `BR${String(plp.id).padStart(6, '0')}${String(index + 1).padStart(3, '0')}BR`,
      service: 'PAC',
    }));
    if (type === 'application/json') return { status: 200, body: { plp: { id: plp.id, expiration_date: plp.expiration_date, labels } } };
    const pdf = makePdf([`PLP ${plp.id} - expires ${plp.expiration_date}`, ...labels.map((label) => `${label.tracking_code}  ${label.order_code}  ${label.customer}`)]);
    return { status: 200, raw: pdf, headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="plp-${plp.id}.pdf"` } };
  }

  function stockPage(request: RouteRequest): Reply {
    const page = Number(request.query.get('page') ?? '1');
    const perPage = Number(request.query.get('per_page') ?? '20');
    if (!Number.isInteger(page) || page < 1) return errors(422, 'page must be a positive integer');
    if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) return errors(422, 'per_page must be from 1 to 100');
    const recipient = request.query.get('recipient_document');
    const sku = request.query.get('sku');
    const matching = state.stock.filter((entry) => (!recipient || entry.recipient_document === recipient) && (!sku || entry.sku === sku));
    const items = matching.slice((page - 1) * perPage, page * perPage);
    // The service sends quantities as text.
    return { status: 200, body: { stock: items.map((entry) => ({ ...entry, stock: String(entry.stock), reserved_stock: String(entry.reserved_stock) })) } };
  }

  const routes: Route[] = [
    { method: 'GET', path: `${shipments}/`, handler: guarded(() => ({ status: 200, body: { plp: state.plps.map(presentPlp) } })) },
    {
      method: 'POST',
      path: `${shipments}/`,
      handler: guarded((request) => {
        const codes = record(jsonBody(request))?.order_remote_codes;
        if (!Array.isArray(codes) || codes.length === 0 || !codes.every((code) => typeof code === 'string')) return errors(422, 'order_remote_codes is required');
        for (const code of codes as string[]) {
          if (!orderOf(code)) return errors(422, `Order ${code} not found`);
          const grouped = state.plps.find((plp) => plp.order_codes.includes(code));
          if (grouped) return errors(422, `Order ${code} is already grouped in PLP ${grouped.id}`);
        }
        const id = String(state.nextPlpId++);
        state.plps.push({ id, expiration_date: new Date(clock.now() + 7 * DAY).toISOString().slice(0, 10), order_codes: [...(codes as string[])] });
        return { status: state.groupStatus, body: { message: `Plp ${id} agrupada com sucesso.` } };
      }),
    },
    {
      method: 'DELETE',
      path: `${shipments}/`,
      handler: guarded((request) => {
        const id = record(jsonBody(request))?.plp_id;
        if (typeof id !== 'string' && typeof id !== 'number') return errors(422, 'plp_id is required');
        const plp = state.plps.find((candidate) => candidate.id === String(id));
        if (!plp) return errors(404, `PLP ${id} not found`);
        state.plps = state.plps.filter((candidate) => candidate !== plp);
        return { status: 200, body: { message: `Plp ${plp.id} desagrupada com sucesso.` } };
      }),
    },
    { method: 'GET', path: `${shipments}/view`, handler: (request) => authenticate(request) ?? viewLabels(request) },
    {
      method: 'GET',
      path: '/questions',
      handler: guarded((request) => {
        const cursorText = request.query.get('cursor');
        if (cursorText) {
          // Filters are ignored once a cursor exists: it refers to the first query's filters.
          const cursor = readCursor(cursorText);
          if (!cursor) return errors(400, 'Invalid cursor');
          return { status: 200, body: questionPage(cursor.platform, cursor.status, cursor.offset) };
        }
        const platform = request.query.get('platform');
        if (!platform) return errors(400, 'platform is required');
        if (platform.includes(',')) return errors(400, 'Only one platform is allowed');
        if (!(PLATFORMS as readonly string[]).includes(platform)) return errors(400, `Unknown platform: ${platform}`);
        const status = request.query.get('status');
        if (status && !(QUESTION_STATUSES as readonly string[]).includes(status)) return errors(400, `Invalid status: ${status}`);
        return { status: 200, body: questionPage(platform, status, 0) };
      }),
    },
    { method: 'GET', path: '/questions/:id', handler: onQuestion((_request, question) => ({ status: 200, body: presentQuestion(question) })) },
    {
      method: 'DELETE',
      path: '/questions/:id',
      handler: onQuestion((_request, question) => {
        state.questions = state.questions.filter((candidate) => candidate !== question);
        return { status: 204 };
      }),
    },
    {
      method: 'POST',
      path: '/questions/:id/answer',
      handler: onQuestion(async (request, question) => {
        const text = ((await fieldsBody(request)) ?? {}).answer;
        if (typeof text !== 'string' || text.trim() === '') return errors(422, "answer can't be blank");
        if (question.status === 'FINISHED') return errors(409, 'Question is finished and can no longer be answered');
        if (question.status === 'ANSWERED') return errors(409, 'Question has already been answered');
        question.status = 'ANSWERED';
        question.answer = { message: text, created_on: new Date(clock.now()).toISOString() };
        return { status: 200, body: presentQuestion(question) };
      }),
    },
    { method: 'GET', path: '/variations/:sku', handler: onVariation((_request, found) => presentFound(found)) },
    {
      method: 'PUT',
      path: '/variations/:sku',
      handler: onVariation((request, found) => {
        const input = record(record(jsonBody(request))?.variation);
        if (!input) return errors(422, 'A JSON body {variation: {...}} is required');
        return applyVariation(found.variation, input) ?? presentFound(found);
      }),
    },
    {
      method: 'DELETE',
      path: '/variations/:sku',
      handler: onVariation((_request, { product, variation }) => {
        if (variation.connected) return errors(409, 'Variations can only be deleted while the item is disconnected from the marketplace');
        product.variations = product.variations.filter((candidate) => candidate !== variation);
        return { status: 204 };
      }),
    },
    {
      method: 'POST',
      path: `${fulfillment}/delivery`,
      handler: guarded(async (request) => {
        const invoice = await invoiceOf(request);
        if (isReply(invoice)) return invoice;
        if (typeof invoice.recipient !== 'string' || !CENTRES.includes(invoice.recipient)) return errors(422, 'recipient_document is not a distribution centre of this marketplace');
        if (typeof invoice.payload !== 'string' || !invoice.payload.trimStart().startsWith('<')) return errors(422, 'invoice payload must be an XML document');
        state.invoices.push({ recipient_document: invoice.recipient, payload: invoice.payload, via: invoice.via });
        return { status: 204 };
      }, { identity: 'full', account: 'optional' }),
    },
    { method: 'GET', path: `${fulfillment}/stock`, handler: guarded(stockPage, { identity: 'full', account: 'absent' }) },
    {
      method: 'GET',
      path: `${fulfillment}/delivery/nfe`,
      handler: guarded((request) => {
        const delivery = request.query.get('delivery');
        const accessKey = request.query.get('order_access_key');
        if (!delivery && !accessKey) return errors(422, 'delivery or order_access_key is required');
        const centre = request.query.get('cd_vat_number');
        const found = state.symbolicReturns.filter(
          (invoice) => (!centre || invoice.cd_vat_number === centre) && (!delivery || invoice.delivery === delivery) && (!accessKey || invoice.order_access_key === accessKey),
        );
        return { status: 200, body: { nfe: found } };
      }),
    },
    { method: 'GET', path: '/products', handler: guarded(productsPage) },
    {
      method: 'GET',
      path: '/products/:sku',
      handler: guarded((request) => {
        const product = state.products.find((candidate) => candidate.sku === request.params.sku);
        return product ? { status: 200, body: presentProduct(product) } : errors(404, 'Product not found');
      }),
    },
    { method: 'POST', path: '/products', handler: guarded(createProduct) },
    { method: 'GET', path: '/freights', handler: guarded(() => ({ status: 200, body: { freight: state.freights } }), { identity: 'apiKey', account: 'required' }) },
    { method: 'GET', path: '/status_types', handler: guarded(() => ({ status: 200, body: state.statusTypes })) },
  ];
  const controls: Route[] = [
    {
      method: 'POST',
      path: '/__emulator/variations',
      handler: (request) => {
        const body = record(jsonBody(request));
        const found = typeof body?.sku === 'string' ? variationOf(body.sku) : undefined;
        if (!found || typeof body?.connected !== 'boolean') return { status: 400, body: { message: 'expected {"sku": "<variation sku>", "connected": true|false}' } };
        found.variation.connected = body.connected;
        return { status: 200, body: { sku: found.variation.sku, connected: found.variation.connected } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/shipments',
      handler: (request) => {
        const status = record(jsonBody(request))?.groupStatus;
        if (status !== 200 && status !== 201) return { status: 400, body: { message: 'expected {"groupStatus": 200|201}' } };
        state.groupStatus = status;
        return { status: 200, body: { groupStatus: status } };
      },
    },
    { method: 'GET', path: '/__emulator/invoices', handler: () => ({ status: 200, body: state.invoices }) },
  ];

  return {
    name: 'marketplace',
    clock,
    routes,
    controls,
    realDialect: toRealDialect,
    ...(throttle ? { throttle } : {}),
    reset: () => {
      state = seedMarketplace(clock.now());
      throttle?.reset();
    },
    state: () => state,
  };
}
