import { SERVICE_ENTRY } from '../../lib/services.ts';
import type { GraphQLError } from 'graphql';
import { z } from 'zod';
import { ErrorCode, errorForUpstream, graphError, missingCredential, upstreamContractError } from '../kit/errors.ts';
import { toNumber } from '../kit/envelopes.ts';
import { listOf } from '../kit/shapes.ts';
import { restPath } from '../kit/paths.ts';
import type { RestCall, RestResponse, RestTransport } from '../kit/transport.ts';
import { serviceDateToIso } from './dates.ts';

/** The gateway header that carries a caller's messaging JWT. */
export const CREDENTIAL_HEADER = SERVICE_ENTRY.messaging.credentialHeaders.token;
const SERVICE = SERVICE_ENTRY.messaging.name;
/** The service's fixed page of store subscribers. */
export const SUBSCRIBER_PAGE_SIZE = 100;

export type KeywordTypeDto = 'opt-in' | 'responder';
export type AutomationTypeDto = 'confirmation' | 'already';

export interface KeywordDto {
  id: string;
  keyword: string;
  type: KeywordTypeDto | null;
  shortCode: string | null;
  createdAt: string | null;
  responderContent: string | null;
  mediaUrl: string | null;
}

export interface StoreDto {
  id: string;
  name: string | null;
  timeZone: string | null;
  createdAt: string | null;
  inboundCallbackUrl: string | null;
  messageStatusUrl: string | null;
  complianceAdmin: string | null;
  complianceNumber: string | null;
  complianceEmail: string | null;
  templates: { help: string | null; stop: string | null; request: string | null; confirmation: string | null; alreadyOptedIn: string | null } | null;
  keywords: KeywordDto[];
  /** Only the account view of a store carries its settings. */
  automation: { confirmation: boolean | null; alreadyOptedIn: boolean | null } | null;
}

export interface SubscriberDto {
  storeId: string;
  mobileId: string;
  id: string | null;
  /** The service's own word: `Opted-In`, `Opted-Out`, `pending`, `locked`. */
  status: string | null;
  createdAt: string | null;
  channel: string | null;
  keyword: string | null;
  keywordId: string | null;
  keywordType: KeywordTypeDto | null;
  shortCode: string | null;
  storeName: string | null;
  accountId: string | null;
  optInAttempts: number | null;
}

export interface MobileNumberDto {
  mobileId: string;
  id: string | null;
  createdAt: string | null;
  optIns: SubscriberDto[];
}

export interface AccountUserDto {
  id: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  createdAt: string | null;
}

/** The account as the graph may show it: the service's `apiKey` and `salt` are dropped here, at the boundary. */
export interface AccountDto {
  id: string;
  name: string | null;
  createdAt: string | null;
  legacy: boolean | null;
  suspended: boolean | null;
  stores: StoreDto[];
  users: AccountUserDto[];
}

export interface SubscriberPageDto {
  items: SubscriberDto[];
  count: number | null;
}

export interface SendOptOutResultDto {
  messageId: string | null;
  message: string | null;
}

// What the service answers, checked here so that nothing past the client meets a shape it did not promise.
// Liberal where real services drift (numbers as text, ids bare or Mongo-wrapped, extra fields), strict on structure.
const text = z.union([z.string(), z.number()]).nullish().transform((value) => (value === undefined || value === null || value === '' ? null : String(value)));
const count = z.union([z.number(), z.string()]).nullish().transform((value) => toNumber(value) ?? null);
const flag = z.union([z.boolean(), z.string(), z.number()]).nullish().transform((value) => (value === true || value === 'true' || value === 1 || value === '1' ? true : value === false || value === 'false' || value === 0 || value === '0' ? false : null));
const mongoId = z
  .union([z.string(), z.number(), z.object({ $id: z.string() }), z.object({ $oid: z.string() })])
  .transform((value) => (typeof value === 'object' ? ('$id' in value ? value.$id : value.$oid) : String(value)));
const serviceDate = z.union([z.string(), z.number()]).nullish().transform((value) => (typeof value === 'string' ? serviceDateToIso(value) : null));
const list = <T extends z.ZodType>(item: T, max?: number) => listOf(item, max).nullish().transform((value) => value ?? []);

const Envelope = z.object({ status: z.string(), code: z.union([z.number(), z.string()]).nullish(), message: z.string().nullish(), results: z.unknown() });

const Keyword = z.object({ _id: mongoId, keyword: z.string(), keywordType: text, shortCode: text, created: serviceDate, responderContent: text, mediaUrl: text });
const keywordType = (value: string | null): KeywordTypeDto | null => (value === 'opt-in' || value === 'responder' ? value : null);
const enabled = (value: string | null | undefined): boolean | null => (value === 'enabled' ? true : value === 'disabled' ? false : null);

const Store = z.object({
  _id: mongoId,
  storeName: text,
  timeZone: text,
  inboundCallbackURL: text,
  messageStatusURL: text,
  complianceAdmin: text,
  complianceNumber: text,
  compliancePhone: text,
  complianceEmail: text,
  created: serviceDate,
  template: z.object({ helpMessage: text, stopMessage: text, requestMessage: text, confirmationMessage: text, alreadyOptedInMessage: text }).nullish(),
  keyword: list(Keyword),
  settings: z.object({ confirmation: text, already: text }).nullish(),
});

const Details = z.object({
  commChannel: text,
  subscriberStatus: text,
  created: serviceDate,
  keywordType: text,
  shortCode: text,
  keywordId: text,
  storeId: text,
  storeName: text,
  accountId: text,
  keyword: text,
  optInAttempts: count,
});
const Subscriber = z.object({ id: mongoId.nullish(), created: serviceDate, mobileId: z.union([z.string(), z.number()]).transform(String), details: Details });
const SubscriberPage = z.object({ count, items: list(Subscriber, SUBSCRIBER_PAGE_SIZE) });
const MobileNumber = z.object({ created: serviceDate, number: z.union([z.string(), z.number()]).transform(String), id: mongoId.nullish(), optIns: list(Details) });
const Account = z.object({
  id: mongoId,
  accountName: text,
  created: serviceDate,
  legacy: flag,
  suspended: flag,
  store: list(Store),
  user: list(z.object({ _id: mongoId, firstName: text, lastName: text, email: text, phone: text, created: serviceDate })),
});
const OptInResult = z.object({ messageId: mongoId });
const OptOutResult = z.union([z.object({ messageId: mongoId.nullish() }), listOf(z.unknown())]);
const LogIn = z.object({ accountId: mongoId, apiKey: z.string().min(1) });

function toStore(store: z.output<typeof Store>): StoreDto {
  return {
    id: store._id,
    name: store.storeName,
    timeZone: store.timeZone,
    createdAt: store.created,
    inboundCallbackUrl: store.inboundCallbackURL,
    messageStatusUrl: store.messageStatusURL,
    complianceAdmin: store.complianceAdmin,
    complianceNumber: store.complianceNumber ?? store.compliancePhone,
    complianceEmail: store.complianceEmail,
    templates: store.template
      ? { help: store.template.helpMessage, stop: store.template.stopMessage, request: store.template.requestMessage, confirmation: store.template.confirmationMessage, alreadyOptedIn: store.template.alreadyOptedInMessage }
      : null,
    keywords: store.keyword.map((keyword) => ({
      id: keyword._id,
      keyword: keyword.keyword,
      type: keywordType(keyword.keywordType),
      shortCode: keyword.shortCode,
      createdAt: keyword.created,
      responderContent: keyword.responderContent,
      mediaUrl: keyword.mediaUrl,
    })),
    automation: store.settings ? { confirmation: enabled(store.settings.confirmation), alreadyOptedIn: enabled(store.settings.already) } : null,
  };
}

function toSubscriber(details: z.output<typeof Details>, extra: { id: string | null; mobileId: string; storeId: string; createdAt: string | null }): SubscriberDto {
  return {
    storeId: details.storeId ?? extra.storeId,
    mobileId: extra.mobileId,
    id: extra.id,
    status: details.subscriberStatus,
    createdAt: extra.createdAt ?? details.created,
    channel: details.commChannel,
    keyword: details.keyword,
    keywordId: details.keywordId,
    keywordType: keywordType(details.keywordType),
    shortCode: details.shortCode,
    storeName: details.storeName,
    accountId: details.accountId,
    optInAttempts: details.optInAttempts,
  };
}

function checked<T extends z.ZodType>(schema: T, value: unknown, operation: string, status: number): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? ` at results.${issue.path.join('.')}` : '';
  throw upstreamContractError(SERVICE, `${operation}: the answer does not have the documented shape${where} (${issue?.message ?? 'unexpected value'})`, status);
}

export interface MessagingClient {
  /** Throws `UNAUTHENTICATED` when the caller sent no credential, before any call is made. */
  requireCredential(): void;
  getStore(storeId: string): Promise<StoreDto | null>;
  getAccount(accountId: string): Promise<AccountDto | null>;
  getSubscriber(storeId: string, mobileId: string): Promise<SubscriberDto | null>;
  getMobileNumber(mobileId: string): Promise<MobileNumberDto | null>;
  /** One of the service's numbered pages (from 1) of 100 subscribers. */
  listSubscribers(storeId: string, page: number): Promise<SubscriberPageDto>;
  sendOptIn(params: { storeId: string; mobileId: string; type: 'single' | 'double' }): Promise<{ messageId: string }>;
  sendOptOut(params: { storeId: string; mobileId: string }): Promise<SendOptOutResultDto>;
  deleteKeyword(params: { storeId: string; keywordId: string }): Promise<void>;
  setResponderContent(params: { storeId: string; keywordId: string; content?: string; mediaUrl?: string }): Promise<void>;
  setAutomation(params: { storeId: string; type: AutomationTypeDto; enabled: boolean }): Promise<void>;
  logIn(params: { email: string; password: string }): Promise<{ accountId: string; apiKey: string }>;
}


/** What a 400 with an empty body means at each endpoint that documents one. */
type EmptyRefusal = 'nothing' | GraphQLError;

/**
 * Every messaging endpoint, called from here and nowhere else. Every call carries the caller's JWT
 * as `authorization: Bearer`; bodies are multipart form data, as the service documents.
 */
export function createMessagingClient({ transport, token }: { transport: RestTransport; token: string | undefined }): MessagingClient {
  function credential(): string {
    if (!token) throw missingCredential(SERVICE, CREDENTIAL_HEADER);
    return token;
  }
  const form = (fields: Record<string, string | undefined>) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.append(name, value);
    return { multipart: body };
  };

  /**
   * One call, its envelope read: the results of a `pass`; a `{status: "fail"}` body (whatever its
   * HTTP status) through the kit's table by its `code`; a 400 with an empty body as the endpoint
   * documents it (`nothing` for a lookup).
   */
  async function call(request: Omit<RestCall, 'answers'>, emptyRefusal?: () => EmptyRefusal): Promise<{ results: unknown; message: string | null; status: number } | null> {
    const response: RestResponse = await transport.request({ ...request, answers: [400] });
    if (response.status === 400 && response.body === undefined) {
      const meaning = emptyRefusal?.();
      if (meaning === 'nothing') return null;
      throw meaning ?? graphError(`${SERVICE}: the request was refused as invalid`, { code: ErrorCode.BadUserInput, service: SERVICE, status: 400 });
    }
    const envelope = checked(Envelope, response.body, request.operation, response.status);
    const verdict = envelope.status.toLowerCase();
    // Anything else is no verdict: read as a failure, a lookup would make it a hiding null.
    if (verdict !== 'pass' && verdict !== 'fail') throw upstreamContractError(SERVICE, `${request.operation} answered an envelope whose status is neither pass nor fail`, response.status);
    if (verdict === 'fail') {
      const declared = toNumber(envelope.code);
      const row = declared !== undefined && declared >= 400 && declared <= 599 ? declared : response.status >= 400 ? response.status : 400;
      throw errorForUpstream({ service: SERVICE, status: response.status, row, body: { message: envelope.message ?? undefined } })!;
    }
    return { results: envelope.results, message: envelope.message ?? null, status: response.status };
  }
  const bearer = (secrets: readonly string[] = []) => {
    const secret = credential();
    return { headers: { authorization: `Bearer ${secret}` }, secrets: [secret, ...secrets] };
  };
  const notFound = (what: string, argument: string) => () => graphError(`${SERVICE}: ${what}`, { code: ErrorCode.NotFound, service: SERVICE, status: 400, argument });
  const invalid = (what: string, argument: string) => () => graphError(`${argument}: ${what}`, { code: ErrorCode.BadUserInput, service: SERVICE, status: 400, argument });

  /** A lookup: a store the account does not hold is refused with a fail body, which means "none". */
  async function lookup<T extends z.ZodType>(request: Omit<RestCall, 'answers'>, schema: T): Promise<z.output<T> | null> {
    try {
      const answer = await call(request, () => 'nothing');
      return answer ? checked(schema, answer.results, request.operation, answer.status) : null;
    } catch (error) {
      const extensions = (error as GraphQLError).extensions;
      if (extensions?.service === SERVICE && (extensions.code === ErrorCode.BadUserInput || extensions.code === ErrorCode.NotFound)) return null;
      throw error;
    }
  }

  return {
    requireCredential() {
      credential();
    },

    async getStore(storeId) {
      const store = await lookup({ operation: 'getStore', method: 'GET', path: restPath('/account/store/detail/:storeId', { storeId }), ...bearer() }, Store);
      return store ? toStore(store) : null;
    },

    async getAccount(accountId) {
      const account = await lookup({ operation: 'getAccount', method: 'GET', path: restPath('/account/details/:accountId', { accountId }), ...bearer() }, Account);
      if (!account) return null;
      return {
        id: account.id,
        name: account.accountName,
        createdAt: account.created,
        legacy: account.legacy,
        suspended: account.suspended,
        stores: account.store.map(toStore),
        users: account.user.map((user) => ({ id: user._id, firstName: user.firstName, lastName: user.lastName, email: user.email, phone: user.phone, createdAt: user.created })),
      };
    },

    async getSubscriber(storeId, mobileId) {
      const found = await lookup({ operation: 'getSubscriber', method: 'GET', path: restPath('/subscriber/statusbystore/:storeId/:mobileId', { storeId, mobileId }), ...bearer() }, Subscriber);
      return found ? toSubscriber(found.details, { id: found.id ?? null, mobileId: found.mobileId, storeId, createdAt: found.created }) : null;
    },

    async getMobileNumber(mobileId) {
      const found = await lookup({ operation: 'getMobileNumber', method: 'GET', path: restPath('/subscriber/status/:mobileId', { mobileId }), ...bearer() }, MobileNumber);
      if (!found) return null;
      return {
        mobileId: found.number,
        id: found.id ?? null,
        createdAt: found.created,
        optIns: found.optIns.filter((details) => details.storeId).map((details) => toSubscriber(details, { id: null, mobileId: found.number, storeId: details.storeId!, createdAt: null })),
      };
    },

    async listSubscribers(storeId, page) {
      const answer = await call({ operation: 'listSubscribers', method: 'GET', path: restPath('/subscriber/bystore/:storeId/:page', { storeId, page: String(page) }), ...bearer() });
      const { count: total, items } = checked(SubscriberPage, answer!.results, 'listSubscribers', answer!.status);
      return { count: total, items: items.map((item) => toSubscriber(item.details, { id: item.id ?? null, mobileId: item.mobileId, storeId, createdAt: item.created })) };
    },

    async sendOptIn({ storeId, mobileId, type }) {
      const answer = await call(
        { operation: 'sendOptIn', method: 'POST', path: '/subscriber/sendoptin', body: form({ mobileId, optInType: type, storeId }), ...bearer() },
        invalid('the service refused the mobile number', 'input.mobileId'),
      );
      return checked(OptInResult, answer!.results, 'sendOptIn', answer!.status);
    },

    async sendOptOut({ storeId, mobileId }) {
      const answer = await call(
        { operation: 'sendOptOut', method: 'POST', path: '/subscriber/sendoptout', body: form({ mobileId, storeId }), ...bearer() },
        notFound('the number is not a subscriber of the store', 'mobileId'),
      );
      const result = checked(OptOutResult, answer!.results, 'sendOptOut', answer!.status);
      return { messageId: Array.isArray(result) ? null : (result.messageId ?? null), message: answer!.message };
    },

    async deleteKeyword({ storeId, keywordId }) {
      await call({ operation: 'deleteKeyword', method: 'POST', path: '/account/store/keyword/delete', body: form({ storeId, keywordId }), ...bearer() }, notFound('the store has no such keyword', 'keywordId'));
    },

    async setResponderContent({ storeId, keywordId, content, mediaUrl }) {
      // Documented with `?token=` in the path; the bearer header authenticates the same call without putting the JWT in a URL.
      await call(
        { operation: 'setResponderContent', method: 'POST', path: '/keyword/editresponderkeywordcontent/', body: form({ storeId, keywordId, responderContent: content, mediaUrl }), ...bearer() },
        notFound('the store has no such keyword', 'input.keywordId'),
      );
    },

    async setAutomation({ storeId, type, enabled: on }) {
      await call({ operation: 'setAutomation', method: 'POST', path: '/account/store/updateautomation', body: form({ storeId, automationType: type, action: on ? 'enable' : 'disable' }), ...bearer() });
    },

    async logIn({ email, password }) {
      // No account is known yet: a caller's token, when there is one, is sent as on every call.
      const headers = token ? { authorization: `Bearer ${token}` } : undefined;
      const answer = await call({
        operation: 'logIn',
        method: 'POST',
        path: '/user/login',
        body: form({ email, password }),
        secrets: [password, ...(token ? [token] : [])],
        ...(headers ? { headers } : {}),
      });
      return checked(LogIn, answer!.results, 'logIn', answer!.status);
    },
  };
}
