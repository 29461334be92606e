import { randomBytes } from 'node:crypto';
import { readInt, type Env } from '../../lib/config.ts';
import { createClock, type EmulatorDefinition, type EmulatorClock } from '../kit/emulator.ts';
import { fieldsBody, jsonBody } from '../kit/bodies.ts';
import type { Reply, Route, RouteRequest } from '../kit/router.ts';
import { createWebhookDeliverer, type EncodedBody } from '../kit/webhooks.ts';
import { createThrottle, readEmulatorRateLimits } from '../kit/throttle.ts';
import { PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import { seedMessaging, type EmulatedAccount, type EmulatedKeyword, type EmulatedStore, type EmulatedSubscriber, type MessagingState, type SubscriberStatus } from './data.ts';
import { presentAccount, presentStore, presentSubscriber, presentSubscriberDetails, serviceDate } from './presenters.ts';

/**
 * How this emulator speaks where the service's variants differ, set by `POST /__emulator/variants`
 * (this emulator has no `{real}` dialect: its spec dialect is already the live service's):
 * - `callbacks`: the body of its callbacks (the live service posts multipart/form-data);
 * - `failureStatus`: the HTTP status of a `{status: "fail"}` body (400, or 200 as PHP services often answer).
 */
export interface MessagingDialect {
  callbacks: 'multipart' | 'urlencoded' | 'json';
  failureStatus: 200 | 400;
}

export const DEFAULT_DIALECT: MessagingDialect = { callbacks: 'multipart', failureStatus: 400 };

/** A text the emulator sent to a handset: proves which confirmations went out and which did not. */
export interface SentMessage {
  messageId: string;
  storeId: string;
  to: string;
  body: string;
  /** What made it: `confirmation`, `request`, `already`, `stop`, `help`, `responder`, `unrecognized`. */
  kind: string;
  at: string;
}

export interface MessagingEmulatorOptions {
  clock?: EmulatorClock;
  /** Wait before retrying a failed callback, doubled each time. @default 500 */
  deliveryRetryMs?: number;
  /** Refuse what goes over the published request rate with a 429 (`EMULATOR_RATE_LIMITS`). @default true */
  rateLimits?: boolean;
}

/** The emulator's own settings: `MESSAGING_EMULATOR_RETRY_MS`, the first callback retry wait; `EMULATOR_RATE_LIMITS`. */
export function readMessagingEmulatorOptions(env: Env): MessagingEmulatorOptions {
  return { deliveryRetryMs: readInt(env, 'MESSAGING_EMULATOR_RETRY_MS', 500, { min: 1, max: 60_000 }), rateLimits: readEmulatorRateLimits(env) };
}

export interface MessagingEmulator extends EmulatorDefinition {
  state(): MessagingState;
  sent(): SentMessage[];
}

const PAGE_SIZE = 100;
const PROCESS_PART = randomBytes(5).toString('hex');
/** The real service locks a number after three double opt-in requests left unanswered. */
const UNANSWERED_DOUBLES_LIMIT = 3;
const STOP_WORDS = new Set(['STOP', 'END', 'CANCEL', 'UNSUBSCRIBE', 'QUIT', 'STOPALL']);
const YES = new Set(['YES', 'Y']);
const NO = new Set(['NO', 'N']);

const envelope = (results: unknown, message = 'Success'): Reply => ({ status: 200, body: { status: 'pass', code: 200, message, results } });
/** The spec's failure for an invalid keyword id, unknown subscriber, invalid mobile id or account id. */
const EMPTY_400: Reply = { status: 400, raw: '', headers: { 'content-type': 'text/html; charset=UTF-8' } };

/** Digits with the country code; the service also takes a leading plus. */
const MOBILE = /^\+?\d{8,15}$/;

const CALLBACK_ENCODINGS: readonly MessagingDialect['callbacks'][] = ['multipart', 'urlencoded', 'json'];
const FAILURE_STATUSES: readonly MessagingDialect['failureStatus'][] = [400, 200];

/** The variants a control request asks for, or what is wrong with it (naming the field, what was expected and what arrived). */
function variantsOf(body: unknown): Partial<MessagingDialect> | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'expected {"callbacks"?: "multipart"|"urlencoded"|"json", "failureStatus"?: 400|200}';
  const { callbacks, failureStatus, ...unknown } = body as Record<string, unknown>;
  const extra = Object.keys(unknown);
  if (extra.length) return `unknown field ${JSON.stringify(extra[0])}: expected callbacks or failureStatus`;
  const variants: Partial<MessagingDialect> = {};
  if (callbacks !== undefined) {
    const encoding = CALLBACK_ENCODINGS.find((candidate) => candidate === callbacks);
    if (!encoding) return `callbacks must be multipart, urlencoded or json; got ${JSON.stringify(callbacks)}`;
    variants.callbacks = encoding;
  }
  if (failureStatus !== undefined) {
    const status = FAILURE_STATUSES.find((candidate) => candidate === failureStatus);
    if (!status) return `failureStatus must be 400 or 200; got ${JSON.stringify(failureStatus)}`;
    variants.failureStatus = status;
  }
  return variants;
}

async function encodeMultipart(body: Record<string, string>): Promise<EncodedBody> {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) form.append(name, value);
  const encoded = new Response(form);
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

export function createMessagingEmulator({ clock = createClock(), deliveryRetryMs = 500, rateLimits = true }: MessagingEmulatorOptions = {}): MessagingEmulator {
  let state = seedMessaging(clock.now());
  // Past 100 requests a second an account gets a real 429, in the service's one failure form.
  const throttle = rateLimits
    ? createThrottle({ rates: PUBLISHED_RATES.messaging!, now: clock.now, refusal: () => ({ status: 429, body: { status: 'fail', code: 429, message: 'Too many requests', results: [] } }) })
    : undefined;
  let dialect: MessagingDialect = { ...DEFAULT_DIALECT };
  let sent: SentMessage[] = [];
  let messageNumber = 0;
  const deliverer = createWebhookDeliverer({
    retryMs: deliveryRetryMs,
    userAgent: 'messaging-callbacks/1.0',
    encode: async (body) => {
      const fields = body as Record<string, string>;
      if (dialect.callbacks === 'json') return { payload: JSON.stringify(fields), contentType: 'application/json' };
      if (dialect.callbacks === 'urlencoded') return { payload: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' };
      return encodeMultipart(fields);
    },
  });

  const fail = (message: string, code = 400): Reply => ({ status: dialect.failureStatus, body: { status: 'fail', code, message, results: [] } });
  /**
   * Shaped like a Mongo ObjectId (seconds, a per-process random part, a counter), and like the real
   * service's unique across resets and restarts: the subgraph dedupes callbacks by message id.
   */
  const nextMessageId = () => {
    messageNumber += 1;
    const seconds = Math.floor(clock.now() / 1000).toString(16).padStart(8, '0');
    return `${seconds}${PROCESS_PART}${(messageNumber % 0xffffff).toString(16).padStart(6, '0')}`;
  };

  function authenticate(request: RouteRequest): EmulatedAccount | Reply {
    const bearer = /^bearer\s+(.+)$/i.exec(String(request.headers.authorization ?? ''))?.[1]?.trim();
    // The responder endpoint is documented with the token in the query as well.
    const token = bearer ?? request.query.get('token') ?? undefined;
    const account = token ? state.accounts.find((candidate) => candidate.token === token) : undefined;
    return account ?? { status: 401, body: { status: 'fail', code: 401, message: 'Invalid or expired token', results: [] } };
  }

  const isReply = (value: unknown): value is Reply => typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number';

  function storeOf(account: EmulatedAccount, storeId: unknown): EmulatedStore | undefined {
    return state.stores.find((store) => store.id === storeId && store.accountId === account.id);
  }

  const digits = (mobile: string) => mobile.replace(/^\+/, '');
  const findSubscriber = (storeId: string, mobileId: string) => state.subscribers.find((entry) => entry.storeId === storeId && entry.mobileId === mobileId);

  function text(store: EmulatedStore, to: string, body: string, kind: string): string {
    const messageId = nextMessageId();
    sent.push({ messageId, storeId: store.id, to, body, kind, at: new Date(clock.now()).toISOString() });
    if (sent.length > 10_000) sent = sent.slice(-10_000);
    return messageId;
  }

  function notifyStatus(store: EmulatedStore, subscriber: EmulatedSubscriber, outcome: { status: 'pass' | 'fail'; message: string; messageId: string; reason?: string }): void {
    if (!store.messageStatusURL) return;
    const body: Record<string, string> = {
      status: outcome.status,
      message: outcome.message,
      messageId: outcome.messageId,
      storeId: store.id,
      subscriberStatus: subscriber.status,
      Details: JSON.stringify({ mobileId: subscriber.mobileId, optInAttempts: subscriber.optInAttempts, shortCode: subscriber.shortCode, ...(outcome.reason ? { reason: outcome.reason } : {}) }),
    };
    deliverer.deliver({ webhookId: `${store.id}:status`, url: store.messageStatusURL }, { id: `${outcome.messageId}:${outcome.status}`, type: 'message.status', body });
  }

  function notifyInbound(store: EmulatedStore, from: string, messageBody: string, messageId: string, keyword: EmulatedKeyword | undefined, subscriber: EmulatedSubscriber | undefined): void {
    if (!store.inboundCallbackURL) return;
    const body: Record<string, string> = {
      storeId: store.id,
      from: `+${from}`,
      messageBody,
      messageId,
      received: serviceDate(clock.now()),
      ...(keyword ? { keyword: keyword.keyword, keywordId: keyword.id, keywordType: keyword.keywordType } : {}),
      ...(subscriber ? { subscriberStatus: subscriber.status } : {}),
    };
    deliverer.deliver({ webhookId: `${store.id}:inbound`, url: store.inboundCallbackURL }, { id: messageId, type: 'message.inbound', body });
  }

  function newSubscriber(store: EmulatedStore, mobileId: string, keyword: EmulatedKeyword | undefined, status: SubscriberStatus): EmulatedSubscriber {
    const subscriber: EmulatedSubscriber = {
      id: `5a1f0c9e8b3d4e0013${String(state.subscribers.length).padStart(6, '0')}`,
      storeId: store.id,
      mobileId,
      created: clock.now(),
      status,
      keywordId: keyword?.id ?? '',
      keyword: keyword?.keyword ?? '',
      keywordType: keyword?.keywordType ?? 'opt-in',
      shortCode: '',
      optInAttempts: 0,
      unansweredDoubles: 0,
    };
    state.subscribers.push(subscriber);
    return subscriber;
  }

  const shortCodeOf = (store: EmulatedStore) => store.keywords[0]?.shortCode ?? '33733';

  function optIn(subscriber: EmulatedSubscriber, store: EmulatedStore): void {
    subscriber.status = 'Opted-In';
    subscriber.unansweredDoubles = 0;
    subscriber.shortCode = shortCodeOf(store);
  }

  /** The state machine's answer to Send Opt-In: always accepted synchronously, refused (if at all) by a status callback. */
  function sendOptIn(store: EmulatedStore, mobileId: string, type: 'single' | 'double'): string {
    const existing = findSubscriber(store.id, mobileId);
    const subscriber = existing ?? newSubscriber(store, mobileId, undefined, 'pending');
    subscriber.optInAttempts += 1;
    const refuse = (message: string, reason: string) => {
      const messageId = nextMessageId();
      notifyStatus(store, subscriber, { status: 'fail', message, messageId, reason });
      return messageId;
    };
    if (subscriber.status === 'locked') return refuse('Subscriber is locked: opt-in blocked', 'locked');
    if (existing?.status === 'Opted-In') {
      const messageId = store.settings.already === 'enabled' ? text(store, mobileId, store.template.alreadyOptedInMessage, 'already') : nextMessageId();
      notifyStatus(store, subscriber, { status: 'pass', message: 'Subscriber is already opted in', messageId });
      return messageId;
    }
    if (type === 'single') {
      if (existing) return refuse('Double opt-in is required for this subscriber', 'double-opt-in-required');
      optIn(subscriber, store);
      const messageId = text(store, mobileId, store.template.confirmationMessage, 'confirmation');
      notifyStatus(store, subscriber, { status: 'pass', message: 'Subscriber opted in', messageId });
      return messageId;
    }
    if (subscriber.unansweredDoubles >= UNANSWERED_DOUBLES_LIMIT) {
      subscriber.status = 'locked';
      return refuse('Three double opt-in requests went unanswered: subscriber locked', 'locked');
    }
    subscriber.status = 'pending';
    subscriber.unansweredDoubles += 1;
    subscriber.shortCode = shortCodeOf(store);
    const messageId = text(store, mobileId, store.template.requestMessage, 'request');
    notifyStatus(store, subscriber, { status: 'pass', message: 'Double opt-in request sent', messageId });
    return messageId;
  }

  /** Opt-out from the API or a STOP from the handset: confirmation, and the short code is released. */
  function optOut(store: EmulatedStore, subscriber: EmulatedSubscriber): string {
    subscriber.status = 'Opted-Out';
    subscriber.unansweredDoubles = 0;
    const messageId = text(store, subscriber.mobileId, store.template.stopMessage, 'stop');
    subscriber.shortCode = '';
    notifyStatus(store, subscriber, { status: 'pass', message: 'Subscriber opted out', messageId });
    return messageId;
  }

  /** A text from a handset: keywords, YES/NO replies, STOP and HELP, as the short code sees them. */
  function inbound(from: string, body: string, storeId?: string) {
    const word = body.trim().toUpperCase().replace(/\s+/g, ' ');
    const messageId = nextMessageId();
    const candidates = storeId ? state.stores.filter((store) => store.id === storeId) : state.stores;
    const keywordStore = candidates.find((store) => store.keywords.some((keyword) => keyword.keyword.toUpperCase() === word));
    if (keywordStore) {
      const keyword = keywordStore.keywords.find((candidate) => candidate.keyword.toUpperCase() === word)!;
      let subscriber = findSubscriber(keywordStore.id, from);
      if (keyword.keywordType === 'responder') {
        const content = [keyword.responderContent, keyword.mediaUrl].filter(Boolean).join(' ');
        if (content) text(keywordStore, from, content, 'responder');
        notifyInbound(keywordStore, from, body, messageId, keyword, subscriber);
        return { messageId, handled: 'responder', storeId: keywordStore.id, subscriberStatus: subscriber?.status ?? null };
      }
      if (subscriber?.status === 'locked') {
        notifyInbound(keywordStore, from, body, messageId, keyword, subscriber);
        return { messageId, handled: 'blocked', storeId: keywordStore.id, subscriberStatus: subscriber.status };
      }
      if (subscriber?.status === 'Opted-In') {
        if (keywordStore.settings.already === 'enabled') text(keywordStore, from, keywordStore.template.alreadyOptedInMessage, 'already');
      } else {
        subscriber ??= newSubscriber(keywordStore, from, keyword, 'Opted-In');
        Object.assign(subscriber, { keywordId: keyword.id, keyword: keyword.keyword, keywordType: keyword.keywordType });
        subscriber.optInAttempts += 1;
        optIn(subscriber, keywordStore);
        const confirmationId = keywordStore.settings.confirmation === 'enabled' ? text(keywordStore, from, keywordStore.template.confirmationMessage, 'confirmation') : messageId;
        notifyStatus(keywordStore, subscriber, { status: 'pass', message: 'Subscriber opted in by keyword', messageId: confirmationId });
      }
      notifyInbound(keywordStore, from, body, messageId, keyword, subscriber);
      return { messageId, handled: 'opt-in', storeId: keywordStore.id, subscriberStatus: subscriber.status };
    }
    // Replies belong to the store whose short code the number is bound to: the latest outstanding request, else the latest opt-in.
    const bound = state.subscribers
      .filter((entry) => entry.mobileId === from && (!storeId || entry.storeId === storeId))
      .sort((a, b) => Number(b.status === 'pending') - Number(a.status === 'pending') || Number(b.status === 'Opted-In') - Number(a.status === 'Opted-In'))[0];
    const store = bound && state.stores.find((candidate) => candidate.id === bound.storeId)!;
    if (bound && store && bound.status === 'pending' && (YES.has(word) || NO.has(word))) {
      if (YES.has(word)) {
        optIn(bound, store);
        const confirmationId = text(store, from, store.template.confirmationMessage, 'confirmation');
        notifyStatus(store, bound, { status: 'pass', message: 'Subscriber confirmed the double opt-in', messageId: confirmationId });
      } else {
        bound.status = 'Opted-Out';
        bound.unansweredDoubles = 0;
        bound.shortCode = '';
        notifyStatus(store, bound, { status: 'pass', message: 'Subscriber declined the double opt-in', messageId });
      }
      notifyInbound(store, from, body, messageId, undefined, bound);
      return { messageId, handled: YES.has(word) ? 'confirm' : 'decline', storeId: store.id, subscriberStatus: bound.status };
    }
    // STOP is honoured from a pending number too: carriers require it whatever the state.
    if (bound && store && STOP_WORDS.has(word) && (bound.status === 'Opted-In' || bound.status === 'pending')) {
      optOut(store, bound);
      notifyInbound(store, from, body, messageId, undefined, bound);
      return { messageId, handled: 'stop', storeId: store.id, subscriberStatus: bound.status };
    }
    if (bound && store && word === 'HELP') {
      text(store, from, store.template.helpMessage, 'help');
      notifyInbound(store, from, body, messageId, undefined, bound);
      return { messageId, handled: 'help', storeId: store.id, subscriberStatus: bound.status };
    }
    if (bound && store && bound.status === 'Opted-In') {
      // A free-text message from a subscriber reaches the store's inbound callback unanswered.
      notifyInbound(store, from, body, messageId, undefined, bound);
      return { messageId, handled: 'message', storeId: store.id, subscriberStatus: bound.status };
    }
    const replyStore = store ?? candidates[0];
    if (replyStore) text(replyStore, from, 'Sorry, we did not recognize that keyword. Reply HELP for help.', 'unrecognized');
    return { messageId, handled: 'unrecognized', storeId: null, subscriberStatus: bound?.status ?? null };
  }

  const withAccount = (handler: (request: RouteRequest, account: EmulatedAccount, fields: Record<string, unknown>) => Reply) => async (request: RouteRequest): Promise<Reply> => {
    const account = authenticate(request);
    if (isReply(account)) return account;
    const fields = request.method === 'GET' ? {} : ((await fieldsBody(request)) ?? {});
    return handler(request, account, fields);
  };
  const field = (fields: Record<string, unknown>, name: string): string => (typeof fields[name] === 'string' ? (fields[name] as string).trim() : '');

  const routes: Route[] = [
    {
      method: 'POST',
      path: '/account/store/keyword/delete',
      handler: withAccount((_request, account, fields) => {
        const store = storeOf(account, field(fields, 'storeId'));
        const index = store ? store.keywords.findIndex((keyword) => keyword.id === field(fields, 'keywordId')) : -1;
        if (!store || index < 0) return EMPTY_400;
        store.keywords.splice(index, 1);
        return envelope([], 'Keyword deleted');
      }),
    },
    {
      method: 'POST',
      path: '/keyword/editresponderkeywordcontent/',
      handler: withAccount((_request, account, fields) => {
        const store = storeOf(account, field(fields, 'storeId'));
        if (!store) return fail('Invalid store id');
        const keyword = store.keywords.find((candidate) => candidate.id === field(fields, 'keywordId'));
        if (!keyword) return EMPTY_400;
        if (keyword.keywordType !== 'responder') return fail('Keyword is not a responder keyword');
        const content = field(fields, 'responderContent');
        const mediaUrl = field(fields, 'mediaUrl');
        if (!content && !mediaUrl) return fail('responderContent or mediaUrl is required');
        if (content.length > 1600) return fail('responderContent exceeds 1600 characters');
        if (mediaUrl && !/^https?:\/\//i.test(mediaUrl)) return fail('mediaUrl must begin with http or https');
        if (content) keyword.responderContent = content;
        else delete keyword.responderContent;
        if (mediaUrl) keyword.mediaUrl = mediaUrl;
        else delete keyword.mediaUrl;
        return envelope({ keywordId: keyword.id, responderContent: keyword.responderContent ?? '', mediaUrl: keyword.mediaUrl ?? '' }, 'Responder content saved');
      }),
    },
    {
      method: 'GET',
      path: '/subscriber/statusbystore/:storeId/:mobileId',
      handler: withAccount((request, account) => {
        const store = storeOf(account, request.params.storeId);
        const subscriber = store && findSubscriber(store.id, digits(request.params.mobileId!));
        if (!store || !subscriber) return EMPTY_400;
        return envelope(presentSubscriber(subscriber, store, account));
      }),
    },
    {
      method: 'POST',
      path: '/subscriber/sendoptin',
      handler: withAccount((_request, account, fields) => {
        const mobileId = field(fields, 'mobileId');
        if (!MOBILE.test(mobileId)) return EMPTY_400;
        const store = storeOf(account, field(fields, 'storeId'));
        if (!store) return fail('Invalid store id');
        const type = field(fields, 'optInType').toLowerCase();
        if (type !== 'single' && type !== 'double') return fail('optInType must be single or double');
        return envelope({ messageId: sendOptIn(store, digits(mobileId), type) }, 'Opt-in accepted');
      }),
    },
    {
      method: 'POST',
      path: '/subscriber/sendoptout',
      handler: withAccount((_request, account, fields) => {
        const mobileId = field(fields, 'mobileId');
        if (!MOBILE.test(mobileId)) return EMPTY_400;
        const store = storeOf(account, field(fields, 'storeId'));
        if (!store) return fail('Invalid store id');
        const subscriber = findSubscriber(store.id, digits(mobileId));
        if (!subscriber) return EMPTY_400;
        // Answered synchronously and no message attempted: the number is already out (or cannot be messaged at all).
        if (subscriber.status === 'Opted-Out') return envelope([], 'Subscriber is already opted out');
        if (subscriber.status === 'locked') return envelope([], 'Subscriber is locked');
        if (subscriber.status === 'pending') {
          subscriber.status = 'Opted-Out';
          subscriber.unansweredDoubles = 0;
          subscriber.shortCode = '';
          const messageId = nextMessageId();
          notifyStatus(store, subscriber, { status: 'pass', message: 'Outstanding double opt-in request withdrawn', messageId });
          return envelope({ messageId }, 'Subscriber opted out');
        }
        return envelope({ messageId: optOut(store, subscriber) }, 'Subscriber opted out');
      }),
    },
    {
      method: 'GET',
      path: '/subscriber/status/:mobileId',
      handler: withAccount((request, account) => {
        const mobileId = digits(request.params.mobileId!);
        const stores = state.stores.filter((store) => store.accountId === account.id);
        const entries = state.subscribers.filter((entry) => entry.mobileId === mobileId && stores.some((store) => store.id === entry.storeId));
        if (!entries.length) return EMPTY_400;
        const first = entries.reduce((a, b) => (a.created <= b.created ? a : b));
        return envelope({
          created: serviceDate(first.created),
          number: mobileId,
          id: { $oid: first.id },
          optIns: entries.map((entry) => presentSubscriberDetails(entry, stores.find((store) => store.id === entry.storeId)!, account)),
        });
      }),
    },
    {
      method: 'GET',
      path: '/account/details/:accountId',
      handler: withAccount((request, account) => {
        if (request.params.accountId !== account.id) return EMPTY_400;
        return envelope(presentAccount(account, state.stores.filter((store) => store.accountId === account.id)));
      }),
    },
    {
      method: 'POST',
      path: '/user/login',
      handler: async (request) => {
        const fields = (await fieldsBody(request)) ?? {};
        const email = field(fields, 'email').toLowerCase();
        const password = typeof fields.password === 'string' ? fields.password : '';
        if (!email || !password) return fail('email and password are required');
        const account = state.accounts.find((candidate) => candidate.users.some((user) => user.email === email && user.password === password));
        if (!account) return fail('Invalid email or password', 401);
        return envelope({ accountId: account.id, apiKey: account.apiKey }, 'Login successful');
      },
    },
    {
      method: 'GET',
      path: '/subscriber/bystore/:storeId/:pageNumber',
      handler: withAccount((request, account) => {
        const store = storeOf(account, request.params.storeId);
        if (!store) return fail('Invalid store id');
        const page = Number(request.params.pageNumber);
        if (!Number.isInteger(page) || page < 1) return fail('Invalid page number');
        const all = state.subscribers.filter((entry) => entry.storeId === store.id);
        const items = all.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((entry) => presentSubscriber(entry, store, account, { paged: true }));
        return envelope({ count: all.length, items, itemsPerPage: PAGE_SIZE, currentPage: String(page) });
      }),
    },
    {
      method: 'GET',
      path: '/account/store/detail/:storeId',
      handler: withAccount((request, account) => {
        const store = storeOf(account, request.params.storeId);
        return store ? envelope(presentStore(store)) : fail('Invalid store id');
      }),
    },
    {
      method: 'POST',
      path: '/account/store/updateautomation',
      handler: withAccount((_request, account, fields) => {
        const store = storeOf(account, field(fields, 'storeId'));
        if (!store) return fail('Invalid store id');
        const type = field(fields, 'automationType');
        const action = field(fields, 'action');
        if (type !== 'confirmation' && type !== 'already') return fail('automationType must be confirmation or already');
        if (action !== 'enable' && action !== 'disable') return fail('action must be enable or disable');
        store.settings[type] = action === 'enable' ? 'enabled' : 'disabled';
        return envelope({ storeId: store.id, automationType: type, status: store.settings[type] }, 'Automation updated');
      }),
    },
  ];

  const controls: Route[] = [
    {
      method: 'POST',
      path: '/__emulator/inbound',
      handler: (request) => {
        const body = (jsonBody(request) ?? {}) as { storeId?: unknown; from?: unknown; body?: unknown };
        const from = typeof body.from === 'string' ? body.from.replace(/[\s+]/g, '') : '';
        if (!/^\d{8,15}$/.test(from) || typeof body.body !== 'string' || !body.body.trim()) {
          return { status: 400, body: { message: 'expected {"from": "<digits with country code>", "body": "<text>", "storeId"?: "<id>"}' } };
        }
        if (body.storeId !== undefined && !state.stores.some((store) => store.id === body.storeId)) return { status: 404, body: { message: 'no such store' } };
        return { status: 200, body: inbound(from, body.body, typeof body.storeId === 'string' ? body.storeId : undefined) };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/stores/:storeId/callbacks',
      handler: (request) => {
        const store = state.stores.find((candidate) => candidate.id === request.params.storeId);
        if (!store) return { status: 404, body: { message: 'no such store' } };
        const body = (jsonBody(request) ?? {}) as { inboundCallbackURL?: unknown; messageStatusURL?: unknown };
        for (const name of ['inboundCallbackURL', 'messageStatusURL'] as const) {
          const value = body[name];
          if (value === undefined) continue;
          if (typeof value !== 'string' || (value !== '' && !/^https?:\/\//.test(value))) return { status: 400, body: { message: `${name} must be an http(s) URL or empty` } };
          store[name] = value;
        }
        return { status: 200, body: { storeId: store.id, callbacksSet: true } };
      },
    },
    // Not `/__emulator/dialect`: the kit owns that path for `{real}`, and its route is matched first.
    { method: 'GET', path: '/__emulator/variants', handler: () => ({ status: 200, body: dialect }) },
    {
      method: 'POST',
      path: '/__emulator/variants',
      handler: (request) => {
        const parsed = variantsOf(jsonBody(request));
        if (typeof parsed === 'string') return { status: 400, body: { message: parsed } };
        dialect = { ...dialect, ...parsed };
        return { status: 200, body: dialect };
      },
    },
    { method: 'GET', path: '/__emulator/deliveries', handler: () => ({ status: 200, body: deliverer.deliveries() }) },
    { method: 'GET', path: '/__emulator/messages', handler: () => ({ status: 200, body: sent }) },
  ];

  return {
    name: 'messaging',
    clock,
    routes,
    controls,
    ...(throttle ? { throttle } : {}),
    reset: () => {
      throttle?.reset();
      // Callback addresses belong to whoever pointed them here, not to the seed: keep them.
      const callbacks = new Map(state.stores.map((store) => [store.id, { inboundCallbackURL: store.inboundCallbackURL, messageStatusURL: store.messageStatusURL }]));
      state = seedMessaging(clock.now());
      for (const store of state.stores) Object.assign(store, callbacks.get(store.id));
      dialect = { ...DEFAULT_DIALECT };
      sent = [];
      deliverer.reset();
    },
    dispose: () => {
      void deliverer.close();
    },
    state: () => state,
    sent: () => sent,
  };
}
