import { pick, seededRandom } from '../kit/random.ts';

/** Demo credentials: printed by `npm start` and used by the tests. The e-mail identifies, the rest authenticate. */
export const DEMO_CREDENTIALS = {
  email: 'seller@demo.example',
  apiKey: 'demo-mkt-api-key-3e9b7c1a5d2f8e4b',
  accountKey: 'demo-mkt-account-key-8c2e4a6f1b3d5e7a',
  userToken: 'demo-mkt-user-token-6a1f3c8e2d9b4f7c',
} as const;

/** The marketplace codes the questions endpoint knows; question ids are prefixed with them. */
export const PLATFORMS = ['ALPHA', 'BETA'] as const;
export const QUESTION_STATUSES = ['ANSWERED', 'UNANSWERED', 'FINISHED'] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];

export interface KeyValue {
  key: string;
  value: string;
}

export interface EmulatedVariation {
  sku: string;
  qty: number;
  ean: string;
  images: string[];
  specifications: KeyValue[];
  /** Only a variation disconnected from the marketplace may be deleted. */
  connected: boolean;
}

export interface EmulatedProduct {
  sku: string;
  name: string;
  description: string;
  status: string;
  qty: number;
  price: number;
  promotional_price: number;
  cost: number;
  weight: number;
  height: number;
  width: number;
  length: number;
  brand: string;
  ean: string;
  nbm: string;
  categories: { code: string; name: string }[];
  images: string[];
  specifications: KeyValue[];
  variations: EmulatedVariation[];
  variation_attributes: string[];
}

export interface EmulatedQuestion {
  id: string;
  platform: string;
  status: QuestionStatus;
  message: string;
  answer: { message: string; created_on: string } | null;
  name: string;
  sku: string;
  tags: string[];
  created_on: string;
  customer: { name: string };
}

export interface EmulatedOrder {
  code: string;
  customer: string;
  value: number;
}

export interface EmulatedPlp {
  id: string;
  expiration_date: string;
  order_codes: string[];
}

export interface EmulatedStock {
  sku: string;
  recipient_document: string;
  deposit_type: string;
  stock: number;
  reserved_stock: number;
}

export interface EmulatedInvoice {
  recipient_document: string;
  payload: string;
  /** How the XML arrived: as JSON text or as a multipart file. */
  via: 'json' | 'multipart';
}

export interface EmulatedSymbolicReturn {
  access_key: string;
  number: string;
  series: string;
  issued_at: string;
  cd_vat_number: string;
  delivery: string;
  order_access_key: string;
  xml: string;
}

export interface EmulatedFreight {
  account: { id: string; name: string };
  created_at: string;
  sale_system: string;
  request: { path: string; zipcode: string; products: { sku: string; qty: string }[] };
  response: {
    render: string;
    products: {
      sku: string;
      category_names: string[];
      freights: { shipping_method: string; courier_name: string; quantity: number; amount: string; delivery_time: number }[];
    }[];
  };
}

export interface MarketplaceState {
  products: EmulatedProduct[];
  questions: EmulatedQuestion[];
  orders: EmulatedOrder[];
  plps: EmulatedPlp[];
  nextPlpId: number;
  stock: EmulatedStock[];
  invoices: EmulatedInvoice[];
  symbolicReturns: EmulatedSymbolicReturn[];
  freights: EmulatedFreight[];
  statusTypes: { code: string; name: string }[];
  /** The grouping answer's status: the spec documents 200, the real service is known to answer 201 too. */
  groupStatus: 200 | 201;
}

/** The marketplace's distribution centres, by tax id. */
export const CENTRES = ['12345678000190', '98765432000110'];

const DAY = 24 * 60 * 60 * 1000;
const ITEMS = ['Office chair', 'Desk lamp', 'Standing desk', 'Monitor arm', 'Keyboard', 'Mouse pad', 'Headset', 'Webcam', 'Bookshelf', 'Notebook stand', 'Cable tray', 'Footrest'];
const BRANDS = ['Acme', 'Umbra', 'Nordik', 'Terra'];
const COLOURS = ['black', 'white', 'grey'];
const BUYERS = ['Ana Souza', 'Bruno Lima', 'Carla Dias', 'Diego Rocha', 'Elisa Melo', 'Fabio Reis', 'Gabriela Paz', 'Hugo Teles'];
const ASKS = ['Does it come assembled?', 'What is the warranty?', 'Is the colour exactly as in the photo?', 'Does it ship to Manaus?', 'Is there an invoice?'];

/** The service's `yyyy-MM-dd'T'HH:mm:ssZZ`, in Brasília time. */
const iso = (time: number) => `${new Date(time - 3 * 60 * 60 * 1000).toISOString().slice(0, 19)}-03:00`;
const isoDate = (time: number) => new Date(time).toISOString().slice(0, 10);
const ean = (n: number) => `789${String(1000000000 + n * 7919).slice(0, 10)}`;

/** The demo seller: 30 products with 1-3 variations, 75 questions, 16 orders (6 grouped in 2 PLPs), stock, freights. */
export function seedMarketplace(now: number): MarketplaceState {
  const random = seededRandom(20261201);
  const products: EmulatedProduct[] = Array.from({ length: 30 }, (_, index) => {
    const n = index + 1;
    const sku = `SKU-${String(n).padStart(4, '0')}`;
    const name = `${ITEMS[index % ITEMS.length]!} ${n}`;
    const variationCount = 1 + (index % 3);
    const price = 50 + Math.floor(random() * 450);
    return {
      sku,
      name,
      description: `${name}, sturdy and simple.`,
      status: n % 7 === 0 ? 'disabled' : 'enabled',
      qty: 10 + Math.floor(random() * 90),
      price,
      promotional_price: price - 5,
      cost: Math.floor(price / 2),
      weight: 1 + Math.floor(random() * 20),
      height: 10 + Math.floor(random() * 90),
      width: 10 + Math.floor(random() * 90),
      length: 10 + Math.floor(random() * 90),
      brand: pick(random, BRANDS),
      ean: ean(n),
      nbm: '9403.30.00',
      categories: [{ code: `CAT${index % 4}`, name: ['Furniture', 'Lighting', 'Peripherals', 'Storage'][index % 4]! }],
      images: [`https://img.marketplace.example/${sku}/1.jpg`],
      specifications: [{ key: 'material', value: pick(random, ['steel', 'oak', 'plastic']) }],
      variations: Array.from({ length: variationCount }, (_, v) => ({
        sku: `${sku}-${COLOURS[v]!.slice(0, 3).toUpperCase()}`,
        qty: Math.floor(random() * 40),
        ean: ean(n * 10 + v),
        images: [`https://img.marketplace.example/${sku}/${COLOURS[v]!}.jpg`],
        specifications: [
          { key: 'color', value: COLOURS[v]! },
          { key: 'price', value: `${price}.90` },
        ],
        // Every third product's variations are disconnected, so they may be deleted.
        connected: n % 3 !== 0,
      })),
      variation_attributes: ['color'],
    };
  });

  const questions: EmulatedQuestion[] = [];
  for (const [platform, count] of [['ALPHA', 60], ['BETA', 15]] as const) {
    for (let index = 0; index < count; index += 1) {
      // Sixty ALPHA questions name only the first ten products: the DataLoader test depends on the repetition.
      const product = products[index % 10]!;
      const status: QuestionStatus = index % 5 === 0 ? 'FINISHED' : index % 2 === 0 ? 'ANSWERED' : 'UNANSWERED';
      const created = now - (count - index) * 3 * 60 * 60 * 1000;
      questions.push({
        id: `${platform}-${String(100000 + index * 37)}`,
        platform,
        status,
        message: pick(random, ASKS),
        answer: status === 'UNANSWERED' ? null : { message: 'Yes, it does. Thank you for asking!', created_on: iso(created + 60 * 60 * 1000) },
        name: product.name,
        sku: product.sku,
        tags: index % 4 === 0 ? ['shipping'] : [],
        created_on: iso(created),
        customer: { name: pick(random, BUYERS) },
      });
    }
  }
  questions.sort((a, b) => b.created_on.localeCompare(a.created_on));

  const orders: EmulatedOrder[] = Array.from({ length: 16 }, (_, index) => ({
    code: `ORD-${2001 + index}`,
    customer: pick(random, BUYERS),
    value: Math.round((80 + random() * 900) * 100) / 100,
  }));
  const plps: EmulatedPlp[] = [
    { id: '7001', expiration_date: isoDate(now + 5 * DAY), order_codes: ['ORD-2001', 'ORD-2002', 'ORD-2003'] },
    { id: '7002', expiration_date: isoDate(now + 6 * DAY), order_codes: ['ORD-2004', 'ORD-2005', 'ORD-2006'] },
  ];

  const stock: EmulatedStock[] = products.flatMap((product, index) =>
    product.variations.map((variation, v) => ({
      sku: variation.sku,
      recipient_document: CENTRES[(index + v) % CENTRES.length]!,
      deposit_type: 'fulfillment',
      stock: 5 + Math.floor(random() * 100),
      reserved_stock: Math.floor(random() * 5),
    })),
  );

  const symbolicReturns: EmulatedSymbolicReturn[] = Array.from({ length: 4 }, (_, index) => {
    const number = String(5001 + index);
    return {
      access_key: `3526110000000000000055001000${number}1000${number}`,
      number,
      series: '1',
      issued_at: iso(now - (index + 1) * DAY),
      cd_vat_number: CENTRES[index % 2]!,
      delivery: `DLV-${900 + index}`,
      order_access_key: `3526110000000000000055001000${2001 + index}1000${2001 + index}`,
      xml: `<?xml version="1.0" encoding="UTF-8"?><nfeProc><NFe><infNFe Id="NFe${number}"><ide><nNF>${number}</nNF><natOp>Retorno simbolico</natOp></ide></infNFe></NFe></nfeProc>`,
    };
  });

  const freights: EmulatedFreight[] = Array.from({ length: 12 }, (_, index) => {
    const product = products[index % products.length]!;
    const qty = 1 + (index % 3);
    return {
      account: { id: 'acc-1', name: 'Demo seller' },
      created_at: iso(now - index * 2 * 60 * 60 * 1000),
      sale_system: index % 2 === 0 ? 'marketplace' : 'storefront',
      request: { path: '/freights/quote', zipcode: `0${1000000 + index * 1111}`.slice(0, 8), products: [{ sku: product.sku, qty: String(qty) }] },
      response: {
        render: 'json',
        products: [
          {
            sku: product.sku,
            category_names: product.categories.map((category) => category.name),
            freights: [
              { shipping_method: 'standard', courier_name: 'Correios PAC', quantity: qty, amount: (19.9 + index).toFixed(2), delivery_time: 8 },
              { shipping_method: 'express', courier_name: 'Correios SEDEX', quantity: qty, amount: (39.5 + index).toFixed(2), delivery_time: 3 },
            ],
          },
        ],
      },
    };
  });

  const statusTypes = [
    { code: 'new', name: 'New' },
    { code: 'approved', name: 'Approved' },
    { code: 'invoiced', name: 'Invoiced' },
    { code: 'shipped', name: 'Shipped' },
    { code: 'delivered', name: 'Delivered' },
    { code: 'canceled', name: 'Canceled' },
  ];

  return { products, questions, orders, plps, nextPlpId: 7003, stock, invoices: [], symbolicReturns, freights, statusTypes, groupStatus: 200 };
}
