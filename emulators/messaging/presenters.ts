import type { EmulatedAccount, EmulatedStore, EmulatedSubscriber } from './data.ts';

/** How the service writes dates: `month/day/year hour:minute:second`, zero-padded, GMT. */
export function serviceDate(ms: number): string {
  const date = new Date(ms);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getUTCMonth() + 1)}/${two(date.getUTCDate())}/${date.getUTCFullYear()} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
}

/** Mongo's `mCreated`: seconds and microseconds. */
const mongoTime = (ms: number) => ({ sec: Math.floor(ms / 1000), usec: (ms % 1000) * 1000 });

export function presentSubscriberDetails(subscriber: EmulatedSubscriber, store: EmulatedStore, account: EmulatedAccount): Record<string, unknown> {
  return {
    commChannel: 'sms',
    subscriberStatus: subscriber.status,
    created: serviceDate(subscriber.created),
    keywordType: subscriber.keywordType,
    shortCode: subscriber.shortCode,
    keywordId: subscriber.keywordId,
    storeId: store.id,
    storeName: store.storeName,
    accountId: account.id,
    keyword: subscriber.keyword,
    optInAttempts: subscriber.optInAttempts,
  };
}

/** The store-level record; the paged variant wraps the id as `{$oid}` and adds `mCreate`. */
export function presentSubscriber(subscriber: EmulatedSubscriber, store: EmulatedStore, account: EmulatedAccount, { paged = false } = {}): Record<string, unknown> {
  return {
    id: paged ? { $oid: subscriber.id } : subscriber.id,
    created: serviceDate(subscriber.created),
    mobileId: subscriber.mobileId,
    details: presentSubscriberDetails(subscriber, store, account),
    ...(paged ? { mCreate: { $date: { $numberLong: String(subscriber.created) } } } : {}),
  };
}

/** Store detail; the account view adds `settings` and names the compliance contacts differently. */
export function presentStore(store: EmulatedStore, { accountView = false } = {}): Record<string, unknown> {
  return {
    _id: { $id: store.id },
    storeName: store.storeName,
    timeZone: store.timeZone,
    inboundCallbackURL: store.inboundCallbackURL,
    messageStatusURL: store.messageStatusURL,
    complianceAdmin: store.complianceAdmin,
    ...(accountView ? { compliancePhone: store.complianceNumber, complianceEmail: store.complianceEmail, settings: { ...store.settings } } : { complianceNumber: store.complianceNumber }),
    mCreated: mongoTime(store.created),
    created: serviceDate(store.created),
    template: { ...store.template },
    keyword: store.keywords.map((keyword) => ({
      _id: { $id: keyword.id },
      keywordType: keyword.keywordType,
      shortCode: keyword.shortCode,
      keyword: keyword.keyword,
      mCreated: mongoTime(keyword.created),
      created: serviceDate(keyword.created),
      ...(keyword.keywordType === 'responder' ? { mediaUrl: keyword.mediaUrl ?? '', responderContent: keyword.responderContent ?? '' } : {}),
    })),
  };
}

/** The account detail as the service shows it, secrets included: the subgraph must never pass them on. */
export function presentAccount(account: EmulatedAccount, stores: EmulatedStore[]): Record<string, unknown> {
  return {
    id: account.id,
    accountName: account.accountName,
    apiKey: account.apiKey,
    salt: account.salt,
    legacy: account.legacy,
    suspended: account.suspended,
    created: serviceDate(account.created),
    mCreated: mongoTime(account.created),
    store: stores.map((store) => presentStore(store, { accountView: true })),
    user: account.users.map((user) => ({
      _id: { $id: user.id },
      accountName: account.accountName,
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      phone: user.phone,
      mCreated: mongoTime(user.created),
      created: serviceDate(user.created),
    })),
  };
}
