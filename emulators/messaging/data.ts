/**
 * Seeded, deterministic demo data of the SMS short-code service: one account with two stores,
 * their keywords, a few subscribers in each state, and the bearer token that opens the account.
 */

export type SubscriberStatus = 'Opted-In' | 'Opted-Out' | 'pending' | 'locked';
export type KeywordType = 'opt-in' | 'responder';

export interface EmulatedKeyword {
  id: string;
  keyword: string;
  keywordType: KeywordType;
  shortCode: string;
  created: number;
  responderContent?: string;
  mediaUrl?: string;
}

export interface EmulatedStore {
  id: string;
  accountId: string;
  storeName: string;
  timeZone: string;
  inboundCallbackURL: string;
  messageStatusURL: string;
  complianceAdmin: string;
  complianceNumber: string;
  complianceEmail: string;
  created: number;
  template: { helpMessage: string; stopMessage: string; requestMessage: string; confirmationMessage: string; alreadyOptedInMessage: string };
  settings: { confirmation: 'enabled' | 'disabled'; already: 'enabled' | 'disabled' };
  keywords: EmulatedKeyword[];
}

export interface EmulatedSubscriber {
  id: string;
  storeId: string;
  mobileId: string;
  created: number;
  status: SubscriberStatus;
  keywordId: string;
  keyword: string;
  keywordType: KeywordType;
  /** The communication short code the subscriber is bound to; empty once released. */
  shortCode: string;
  optInAttempts: number;
  /** Double opt-in requests sent and not answered yet (YES/NO resets it). */
  unansweredDoubles: number;
}

export interface EmulatedUser {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  password: string;
  created: number;
}

export interface EmulatedAccount {
  id: string;
  accountName: string;
  apiKey: string;
  salt: string;
  legacy: boolean;
  suspended: boolean;
  created: number;
  users: EmulatedUser[];
  /** The bearer JWT the account's API calls carry. */
  token: string;
}

export interface MessagingState {
  accounts: EmulatedAccount[];
  stores: EmulatedStore[];
  subscribers: EmulatedSubscriber[];
}

/** A JWT-shaped demo token (the emulator compares it, it does not verify a signature). */
const jwt = (account: string) =>
  `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: account, iss: 'messaging-emulator' })).toString('base64url')}.c2lnbmF0dXJlLW9mLXRoZS1lbXVsYXRvcg`;

export const DEMO_ACCOUNT_ID = '5a1f0c9e8b3d4e0012a7c001';
export const OTHER_ACCOUNT_ID = '5a1f0c9e8b3d4e0012a7c002';
export const DEMO_STORE_ID = '5a1f0c9e8b3d4e0012a7d001';
export const SECOND_STORE_ID = '5a1f0c9e8b3d4e0012a7d002';
export const OTHER_STORE_ID = '5a1f0c9e8b3d4e0012a7d003';
export const DEMO_TOKEN = jwt(DEMO_ACCOUNT_ID);
export const OTHER_TOKEN = jwt(OTHER_ACCOUNT_ID);
export const DEMO_API_KEY = 'mk_live_7f3a9c2e51b84d06a1e0c4b2';
export const DEMO_LOGIN = { email: 'ops@corner-bakery.example', password: 'correct horse battery staple' } as const;
export const SHORT_CODES = ['33733', '44844'] as const;

/** Numbers seeded in the demo store, one per state of the table. */
export const SEEDED_NUMBERS = {
  optedIn: '15550000001',
  optedOut: '15550000002',
  pending: '15550000003',
  locked: '15550000004',
} as const;

const template = (store: string) => ({
  helpMessage: `${store}: reply STOP to cancel. Msg&Data rates may apply.`,
  stopMessage: `${store}: you are opted out and will receive no further messages.`,
  requestMessage: `${store}: reply YES to receive up to 4 msgs/month. Msg&Data rates may apply.`,
  confirmationMessage: `You opted in to ${store} Coupons! 4 msgs/month. Reply HELP for help, STOP to cancel.`,
  alreadyOptedInMessage: `You are already opted in to ${store}. Reply STOP to cancel.`,
});

export function seedMessaging(now: number): MessagingState {
  const day = 24 * 60 * 60 * 1000;
  const created = now - 90 * day;
  const keyword = (id: string, word: string, type: KeywordType, extra: Partial<EmulatedKeyword> = {}): EmulatedKeyword => ({
    id,
    keyword: word,
    keywordType: type,
    shortCode: SHORT_CODES[0],
    created,
    ...extra,
  });
  const stores: EmulatedStore[] = [
    {
      id: DEMO_STORE_ID,
      accountId: DEMO_ACCOUNT_ID,
      storeName: 'Corner Bakery',
      timeZone: 'America/New_York',
      inboundCallbackURL: '',
      messageStatusURL: '',
      complianceAdmin: 'Dana Baker',
      complianceNumber: '15551230000',
      complianceEmail: 'compliance@corner-bakery.example',
      created,
      template: template('Corner Bakery'),
      settings: { confirmation: 'enabled', already: 'enabled' },
      keywords: [
        keyword('5a1f0c9e8b3d4e0012a7e001', 'BREAD', 'opt-in'),
        keyword('5a1f0c9e8b3d4e0012a7e002', 'CROISSANT', 'opt-in'),
        keyword('5a1f0c9e8b3d4e0012a7e003', 'HOURS', 'responder', { responderContent: 'Open 7am-7pm every day.' }),
        keyword('5a1f0c9e8b3d4e0012a7e004', 'MENU', 'responder', { mediaUrl: 'https://corner-bakery.example/menu.jpg' }),
      ],
    },
    {
      id: SECOND_STORE_ID,
      accountId: DEMO_ACCOUNT_ID,
      storeName: 'Corner Bakery Catering',
      timeZone: 'America/New_York',
      inboundCallbackURL: '',
      messageStatusURL: '',
      complianceAdmin: 'Dana Baker',
      complianceNumber: '15551230000',
      complianceEmail: 'compliance@corner-bakery.example',
      created: created + day,
      template: template('Corner Bakery Catering'),
      settings: { confirmation: 'enabled', already: 'enabled' },
      keywords: [keyword('5a1f0c9e8b3d4e0012a7e011', 'CATER', 'opt-in', { shortCode: SHORT_CODES[1] })],
    },
    {
      id: OTHER_STORE_ID,
      accountId: OTHER_ACCOUNT_ID,
      storeName: 'Elsewhere Books',
      timeZone: 'UTC',
      inboundCallbackURL: '',
      messageStatusURL: '',
      complianceAdmin: 'Ola Reader',
      complianceNumber: '447700900000',
      complianceEmail: 'ola@elsewhere.example',
      created,
      template: template('Elsewhere Books'),
      settings: { confirmation: 'enabled', already: 'enabled' },
      keywords: [keyword('5a1f0c9e8b3d4e0012a7e021', 'BOOKS', 'opt-in')],
    },
  ];
  const subscriber = (n: number, storeId: string, mobileId: string, status: SubscriberStatus, extra: Partial<EmulatedSubscriber> = {}): EmulatedSubscriber => ({
    id: `5a1f0c9e8b3d4e0012a7f${String(n).padStart(3, '0')}`,
    storeId,
    mobileId,
    created: created + n * 3600_000,
    status,
    keywordId: '5a1f0c9e8b3d4e0012a7e001',
    keyword: 'BREAD',
    keywordType: 'opt-in',
    shortCode: status === 'Opted-Out' ? '' : SHORT_CODES[0],
    optInAttempts: 1,
    unansweredDoubles: status === 'pending' ? 1 : 0,
    ...extra,
  });
  const subscribers: EmulatedSubscriber[] = [
    subscriber(1, DEMO_STORE_ID, SEEDED_NUMBERS.optedIn, 'Opted-In'),
    subscriber(2, DEMO_STORE_ID, SEEDED_NUMBERS.optedOut, 'Opted-Out'),
    subscriber(3, DEMO_STORE_ID, SEEDED_NUMBERS.pending, 'pending'),
    subscriber(4, DEMO_STORE_ID, SEEDED_NUMBERS.locked, 'locked', { optInAttempts: 4, unansweredDoubles: 3 }),
    subscriber(5, SECOND_STORE_ID, SEEDED_NUMBERS.optedIn, 'Opted-In', { keywordId: '5a1f0c9e8b3d4e0012a7e011', keyword: 'CATER', shortCode: SHORT_CODES[1] }),
    // Enough opted-in numbers that the demo store's list (210) spans three of the service's 100-record pages.
    ...Array.from({ length: 206 }, (_, index) => subscriber(100 + index, DEMO_STORE_ID, `1555100${String(index).padStart(4, '0')}`, 'Opted-In')),
  ];
  return {
    accounts: [
      {
        id: DEMO_ACCOUNT_ID,
        accountName: 'Corner Bakery Group',
        apiKey: DEMO_API_KEY,
        salt: 'b1d4c0ffee5a1t',
        legacy: false,
        suspended: false,
        created,
        token: DEMO_TOKEN,
        users: [
          { id: '5a1f0c9e8b3d4e0012a7b001', firstName: 'Dana', lastName: 'Baker', email: DEMO_LOGIN.email, phone: '15551230000', password: DEMO_LOGIN.password, created },
          { id: '5a1f0c9e8b3d4e0012a7b002', firstName: 'Sam', lastName: 'Rye', email: 'sam@corner-bakery.example', phone: '15551230001', password: 'another long password', created: created + day },
        ],
      },
      {
        id: OTHER_ACCOUNT_ID,
        accountName: 'Elsewhere Books Ltd',
        apiKey: 'mk_live_0000aaaa1111bbbb2222cccc',
        salt: 'e1sewhere5a1t',
        legacy: true,
        suspended: false,
        created,
        token: OTHER_TOKEN,
        users: [{ id: '5a1f0c9e8b3d4e0012a7b003', firstName: 'Ola', lastName: 'Reader', email: 'ola@elsewhere.example', phone: '447700900000', password: 'books and more books', created }],
      },
    ],
    stores,
    subscribers,
  };
}
