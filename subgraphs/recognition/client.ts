import { z } from 'zod';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { missingCredential, upstreamContractError } from '../kit/errors.ts';
import { asBoolean, asNumber, asRecord, asText, headerValue, unwrap } from '../kit/envelopes.ts';
import { bool, identifier, listOf, num, optBool, optNum, optText, parseAnswer, quick, text, UNUSUAL } from '../kit/shapes.ts';
import type { RestCall, RestResponse, RestTransport } from '../kit/transport.ts';
import type { CallScope } from '../kit/callScope.ts';
import { restPath } from '../kit/paths.ts';

/** The gateway header that carries a caller's recognition token. */
export const CREDENTIAL_HEADER = SERVICE_ENTRY.recognition.credentialHeaders.token;
const SERVICE = SERVICE_ENTRY.recognition.name;

/** Limits the graph checks before calling the service. */
export const LIMITS = {
  /** `standouts(limit)`, as the service accepts it. */
  standouts: { min: 1, max: 100 },
  /** Ids in one `redemptions(ids)`: each is an upstream call of its own. */
  redemptionIds: 100,
} as const;

export type WebhookEventTypeDto = 'bonus.created' | 'achievement_event.created';
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventTypeDto[] = ['bonus.created', 'achievement_event.created'];

export interface ApiKeyDto {
  id: string;
  label: string;
  readOnly: boolean;
}

export interface CreatedApiKeyDto {
  success: boolean;
  message: string | null;
  token: string;
  label: string;
  readOnly: boolean;
}

export interface ConfirmationDto {
  success: boolean;
  message: string | null;
}

/** A user as returned inside analytics; custom properties arrive as extra keys. */
export interface UserDto {
  id: string;
  short_name?: string | null;
  display_name?: string | null;
  username?: string | null;
  email?: string | null;
  path?: string | null;
  full_pic_url?: string | null;
  profile_pic_url?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  last_active_at?: string | null;
  external_unique_id?: string | null;
  budget_boost?: number | null;
  user_mode?: string | null;
  country?: string | null;
  time_zone?: string | null;
  can_give?: boolean | null;
  can_receive?: boolean | null;
  earning_balance?: number | null;
  lifetime_earnings?: number | null;
  giving_balance?: number | null;
  earning_balance_with_currency?: string | null;
  lifetime_earnings_with_currency?: string | null;
  giving_balance_with_currency?: string | null;
  status?: string | null;
  custom_properties: { name: string; value: string }[];
}

export interface LeaderboardEntryDto {
  count: number;
  user: UserDto;
}

export interface TrendDto {
  hashtag: string;
  count: number;
}

export interface RichTextDto {
  text?: string | null;
  html?: string | null;
}

export interface DenominationDto {
  id: string;
  name?: string | null;
  price?: number | null;
  display_price?: string | null;
  /** Carried down so the full reward is fetched in the same country as the catalogue. */
  request_country?: string;
}

export interface CatalogRewardDto {
  name: string;
  image_url?: string | null;
  minimum_display_price?: string | null;
  description?: RichTextDto | null;
  disclaimer_html?: string | null;
  warning?: string | null;
  denominations: DenominationDto[];
}

export interface RewardGroupDto {
  type: string;
  name: string;
  rewards: CatalogRewardDto[];
}

export interface RewardDto {
  id: string;
  name?: string | null;
  price?: number | null;
  display_price?: string | null;
  description?: RichTextDto | null;
  image_url?: string | null;
  disclaimer_html?: string | null;
  warning?: string | null;
  quantity?: number | null;
  type?: string | null;
}

export interface RewardDetailsDto {
  id: string;
  name?: string | null;
  price?: number | null;
  display_price?: string | null;
  type?: string | null;
  image_url?: string | null;
}

export interface RedemptionDto {
  id: string;
  created_at?: string | null;
  state?: string | null;
  certificate_url?: string | null;
  claim_url?: string | null;
  auto_approvable?: boolean | null;
  reward_details?: RewardDetailsDto | null;
}

export interface WebhookDto {
  id: string;
  url: string;
  event_types: WebhookEventTypeDto[];
}

export type TeamDto = { managerId: string } | { customProperties: Record<string, string> };

export interface LeaderboardParams {
  direction?: 'received' | 'given';
  hashtag?: string;
  team?: TeamDto;
  /** ISO dates (YYYY-MM-DD); sent in the service's `DD Mon YYYY`. */
  startDate?: string;
  endDate?: string;
}

export interface StandoutsParams {
  role?: string;
  value?: string;
  limit?: number;
  period?: string;
  customPropertyName?: string;
  customPropertyValue?: string;
}

export interface RewardCatalogParams {
  catalogCountry?: string;
  requestCountry?: string;
  personalizeFor?: string;
}

const KNOWN_USER_KEYS = new Set([
  'id', 'short_name', 'display_name', 'username', 'email', 'path', 'full_pic_url', 'profile_pic_url', 'first_name', 'last_name',
  'last_active_at', 'external_unique_id', 'budget_boost', 'user_mode', 'country', 'time_zone', 'can_give', 'can_receive',
  'earning_balance', 'lifetime_earnings', 'giving_balance', 'earning_balance_with_currency', 'lifetime_earnings_with_currency',
  'giving_balance_with_currency', 'status',
]);
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `2026-01-05` to the service's `05 Jan 2026`. */
export function serviceDate(iso: string): string {
  const [year, month, day] = iso.split('-');
  return `${day} ${MONTHS[Number(month) - 1]} ${year}`;
}

/** A user's fields the spec does not name, as text: the company's custom properties. */
export function customPropertiesOf(user: Record<string, unknown>): UserDto['custom_properties'] {
  // A loop rather than entries/filter/map: a leaderboard maps 100 users of some 27 keys each.
  const properties: UserDto['custom_properties'] = [];
  for (const name in user) {
    const value = user[name];
    if ((typeof value === 'string' || typeof value === 'number') && !KNOWN_USER_KEYS.has(name)) properties.push({ name, value: String(value) });
  }
  return properties;
}

export function toUser(raw: unknown): UserDto {
  const user = asRecord(raw);
  const custom_properties = customPropertiesOf(user);
  return {
    id: String(user.id),
    short_name: asText(user.short_name),
    display_name: asText(user.display_name),
    username: asText(user.username),
    email: asText(user.email),
    path: asText(user.path),
    full_pic_url: asText(user.full_pic_url),
    profile_pic_url: asText(user.profile_pic_url),
    first_name: asText(user.first_name),
    last_name: asText(user.last_name),
    last_active_at: asText(user.last_active_at),
    external_unique_id: asText(user.external_unique_id),
    budget_boost: asNumber(user.budget_boost),
    user_mode: asText(user.user_mode),
    country: asText(user.country),
    time_zone: asText(user.time_zone),
    can_give: asBoolean(user.can_give),
    can_receive: asBoolean(user.can_receive),
    earning_balance: asNumber(user.earning_balance),
    lifetime_earnings: asNumber(user.lifetime_earnings),
    giving_balance: asNumber(user.giving_balance),
    earning_balance_with_currency: asText(user.earning_balance_with_currency),
    lifetime_earnings_with_currency: asText(user.lifetime_earnings_with_currency),
    giving_balance_with_currency: asText(user.giving_balance_with_currency),
    status: asText(user.status),
    custom_properties,
  };
}

// The answers' declared shapes, built once. The real service wraps most answers in
// `{success: true, result}` (docs/services/recognition.md); `answer` unwraps before reading.

const richText = z
  .union([z.string().transform((value): RichTextDto => ({ text: value, html: null })), z.object({ text: optText, html: optText })])
  .nullish()
  .transform((value): RichTextDto | null => value ?? null);

// A leaderboard maps 100 users of some 27 keys each. The shape checks what a user promises (an
// object with an id) and passes the object through; `toUser` then reads the rest, every field
// optional, custom properties being whatever keys remain. A zod object per user, or a transform
// inside the shape, cost three to four times the hand-written reader on the benchmark's leaderboard.
function isUserWithId(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const userId = (value as { id?: unknown }).id;
  return (typeof userId === 'string' && userId !== '') || typeof userId === 'number';
}
const userShape = z.custom<Record<string, unknown>>(isUserWithId, 'expected a user with an id');

const leaderboardEntry = z.object({ count: num, user: userShape });
// The leaderboard body is undocumented: a bare array, or one under `leaderboard`.
const leaderboardShape = z.union([listOf(leaderboardEntry), z.object({ leaderboard: listOf(leaderboardEntry) }).transform((body) => body.leaderboard)]);

// zod's union, array and object over 100 entries cost some 60 µs of every `leaderboard100`.
function quickLeaderboardEntry(value: unknown): z.output<typeof leaderboardEntry> {
  const entry = quick.object(value);
  if (typeof entry.count !== 'number' || !isUserWithId(entry.user)) throw UNUSUAL;
  return { count: entry.count, user: entry.user };
}

function quickLeaderboard(body: unknown): z.output<typeof leaderboardShape> {
  // As the shape: a bare array, or one under `leaderboard`.
  return quick.array(Array.isArray(body) ? body : quick.object(body).leaderboard).map(quickLeaderboardEntry);
}

function toLeaderboard(entries: z.infer<typeof leaderboardShape>): LeaderboardEntryDto[] {
  return entries.map(({ count, user }) => ({ count, user: toUser(user) }));
}

const apiKeysShape = listOf(z.object({ id: identifier, label: text, read_only: bool }).transform(({ read_only, ...key }): ApiKeyDto => ({ ...key, readOnly: read_only })));
const trendsShape = listOf(z.object({ hashtag: text, count: num }));

const denominationShape = z.object({ id: identifier, name: optText, price: optNum, display_price: optText });
const catalogRewardShape = z.object({
  name: text,
  image_url: optText,
  minimum_display_price: optText,
  description: richText,
  disclaimer_html: optText,
  warning: optText,
  denominations: listOf(denominationShape),
});
// The spec nests a group's rewards under `items`; the real service sends the array itself.
const catalogueShape = listOf(
  z.object({
    type: text,
    name: text,
    rewards: z.union([listOf(catalogRewardShape), z.object({ items: listOf(catalogRewardShape) }).transform((rewards) => rewards.items)]),
  }),
);

// The catalogue and a reward as the service usually sends them, read by hand (`quick`): the same
// values as the shapes above give, which read anything else.
function quickRichText(value: unknown): RichTextDto | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return { text: value, html: null };
  const rich = quick.object(value);
  return { text: quick.optText(rich.text), html: quick.optText(rich.html) };
}

function quickDenomination(value: unknown): z.output<typeof denominationShape> {
  const denomination = quick.object(value);
  return { id: quick.identifier(denomination.id), name: quick.optText(denomination.name), price: quick.optNum(denomination.price), display_price: quick.optText(denomination.display_price) };
}

function quickCatalogReward(value: unknown): z.output<typeof catalogRewardShape> {
  const reward = quick.object(value);
  return {
    name: quick.text(reward.name),
    image_url: quick.optText(reward.image_url),
    minimum_display_price: quick.optText(reward.minimum_display_price),
    description: quickRichText(reward.description),
    disclaimer_html: quick.optText(reward.disclaimer_html),
    warning: quick.optText(reward.warning),
    denominations: quick.array(reward.denominations).map(quickDenomination),
  };
}

function quickCatalogue(body: unknown): z.output<typeof catalogueShape> {
  return quick.array(body).map((value) => {
    const group = quick.object(value);
    const rewards = quick.array(Array.isArray(group.rewards) ? group.rewards : quick.object(group.rewards).items);
    return { type: quick.text(group.type), name: quick.text(group.name), rewards: rewards.map(quickCatalogReward) };
  });
}

function quickReward(body: unknown): z.output<typeof rewardShape> {
  const reward = quick.object(body);
  return {
    id: quick.identifier(reward.id),
    name: quick.text(reward.name),
    price: quick.optNum(reward.price),
    display_price: quick.optText(reward.display_price),
    description: quickRichText(reward.description),
    image_url: quick.optText(reward.image_url),
    disclaimer_html: quick.optText(reward.disclaimer_html),
    warning: quick.optText(reward.warning),
    quantity: quick.optNum(reward.quantity),
    type: quick.optText(reward.type),
  };
}

const rewardShape = z.object({
  id: identifier,
  name: text,
  price: optNum,
  display_price: optText,
  description: richText,
  image_url: optText,
  disclaimer_html: optText,
  warning: optText,
  quantity: optNum,
  type: optText,
});

const redemptionShape = z.object({
  id: identifier,
  created_at: optText,
  state: text,
  certificate_url: optText,
  claim_url: optText,
  auto_approvable: optBool,
  reward_details: z
    .object({ id: identifier, name: optText, price: optNum, display_price: optText, type: optText, image_url: optText })
    .nullish()
    .transform((details) => details ?? null),
});

// A redemption list asks for one each: twenty or more calls per operation.
function quickRedemption(body: unknown): z.output<typeof redemptionShape> {
  const redemption = quick.object(body);
  const details = redemption.reward_details === null || redemption.reward_details === undefined ? null : quick.object(redemption.reward_details);
  return {
    id: quick.identifier(redemption.id),
    created_at: quick.optText(redemption.created_at),
    state: quick.text(redemption.state),
    certificate_url: quick.optText(redemption.certificate_url),
    claim_url: quick.optText(redemption.claim_url),
    auto_approvable: quick.optBool(redemption.auto_approvable),
    reward_details: details && {
      id: quick.identifier(details.id),
      name: quick.optText(details.name),
      price: quick.optNum(details.price),
      display_price: quick.optText(details.display_price),
      type: quick.optText(details.type),
      image_url: quick.optText(details.image_url),
    },
  };
}

/** Each quick reader with the shape it mirrors, for the test that holds one to the other. */
export const QUICK_READERS = {
  catalogue: { shape: catalogueShape, read: quickCatalogue },
  reward: { shape: rewardShape, read: quickReward },
  redemption: { shape: redemptionShape, read: quickRedemption },
  leaderboard: { shape: leaderboardShape, read: quickLeaderboard },
};

const webhooksShape = listOf(
  z.object({
    id: identifier,
    url: text,
    // Event types this client does not know yet are left out rather than refused.
    event_types: listOf(z.string()).transform((types) => types.filter((type): type is WebhookEventTypeDto => WEBHOOK_EVENT_TYPES.includes(type as WebhookEventTypeDto))),
  }),
);

const idShape = z.object({ id: identifier });

// Documented as `{success, message}`; an empty body is read as a plain success.
const confirmationShape = z
  .object({ success: optBool, message: optText })
  .optional()
  .transform((body): ConfirmationDto => ({ success: body?.success !== false, message: body?.message ?? null }));

/**
 * The one reader of recognition answers: the envelope or the bare value, checked against its
 * shape. A 2xx that says `success: false` is the service reporting a failure, not data.
 */
function answer<T>(schema: z.ZodType<T>, response: RestResponse, operation: string, read?: (body: unknown) => T): T {
  refuseFailure(response, operation);
  return parseAnswer(schema, unwrap(response.body), { service: SERVICE, operation, status: response.status }, read);
}

function refuseFailure(response: RestResponse, operation: string): void {
  const body = response.body;
  if (body && typeof body === 'object' && (body as { success?: unknown }).success === false) {
    const said = (body as { message?: unknown }).message;
    throw upstreamContractError(SERVICE, `${operation} failed: ${typeof said === 'string' && said ? said : 'the service answered success: false'}`, response.status);
  }
}

/** A write's `{success, message}`, the body itself rather than an envelope; `success: false` fails as in `answer`. */
function confirmation(response: RestResponse, operation: string): ConfirmationDto {
  refuseFailure(response, operation);
  return parseAnswer(confirmationShape, response.body, { service: SERVICE, operation, status: response.status });
}

export interface RecognitionClient {
  /** Throws `UNAUTHENTICATED` when the caller sent no credential, before any call is made. */
  requireCredential(): void;
  listApiKeys(params: { userId?: string }): Promise<ApiKeyDto[]>;
  createApiKey(params: { label: string; readOnly: boolean; userId?: string }): Promise<CreatedApiKeyDto>;
  deleteApiKey(id: string): Promise<ConfirmationDto>;
  getTrends(): Promise<TrendDto[]>;
  getLeaderboard(params: LeaderboardParams): Promise<LeaderboardEntryDto[]>;
  getStandouts(params: StandoutsParams): Promise<LeaderboardEntryDto[]>;
  listRewards(params: RewardCatalogParams): Promise<RewardGroupDto[]>;
  getReward(id: string, requestCountry?: string): Promise<RewardDto | null>;
  getRedemption(id: string): Promise<RedemptionDto | null>;
  listWebhooks(): Promise<WebhookDto[]>;
  createWebhook(params: { url: string; eventTypes?: readonly WebhookEventTypeDto[] }): Promise<{ id: string }>;
  updateWebhook(id: string, params: { url?: string; eventTypes?: readonly WebhookEventTypeDto[] }): Promise<{ id: string }>;
  deleteWebhook(id: string): Promise<{ id: string }>;
  teapot(): Promise<void>;
  /** Proves the credential is valid (subscriptions check before streaming anything). */
  verifyCredential(): Promise<void>;
}

/**
 * Every recognition endpoint, called from here and nowhere else. Reads carry the token as the
 * documented `access_token` query parameter; writes carry it as a bearer header, because the real
 * service refuses a token that can write when it travels in a URL.
 */
/**
 * A caller's calls: its token, as reads and writes carry it. Methods of an object made here, not
 * functions declared in the client's factory: tsx, which keeps function names, renames each of
 * those with a property definition every time the factory runs, once per request.
 */
function callsWith(token: string | undefined, scope: CallScope | undefined) {
  return {
    credential(): string {
      return required(token);
    },
    // The fixed properties come first: a literal that starts with a spread makes V8 clone the shape of
    // `call`, which differs at every call site, at about four times the cost per upstream call.
    read(call: Omit<RestCall, 'method' | 'secrets'>): RestCall {
      const secret = required(token);
      // The scope here, in the literal made anyway: `scopedTransport` then has no copy of the call to make.
      return { method: 'GET', secrets: [secret], scope, ...call, query: { ...call.query, access_token: secret } };
    },
    write(method: RestCall['method'], call: Omit<RestCall, 'method' | 'secrets'>): RestCall {
      const secret = required(token);
      return { method, secrets: [secret], scope, ...call, headers: { ...call.headers, authorization: `Bearer ${secret}` } };
    },
  };
}

function required(token: string | undefined): string {
  if (!token) throw missingCredential(SERVICE, CREDENTIAL_HEADER);
  return token;
}

/** `scope`, the request's, is the one `transport` (its `scopedTransport`) puts on every call. */
export function createRecognitionClient({ transport, token, scope }: { transport: RestTransport; token: string | undefined; scope?: CallScope }): RecognitionClient {
  const { credential, read, write } = callsWith(token, scope);

  return {
    async listApiKeys({ userId }) {
      const response = await transport.request(read({ operation: 'listApiKeys', path: '/api_keys', query: { user_id: userId } }));
      return answer(apiKeysShape, response, 'listApiKeys');
    },

    async createApiKey({ label, readOnly, userId }) {
      // Documented as multipart with no fields: everything travels in the query.
      const response = await transport.request(
        write('POST', { operation: 'createApiKey', path: '/api_keys', query: { label, read_only: readOnly, user_id: userId }, body: { multipart: new FormData() } }),
      );
      // The service's own refusal first: without it, the missing token below would say the key was made.
      const confirmed = confirmation(response, 'createApiKey');
      // Documented as X-SERVICE-Authentication-Token; the vendor's name replaces SERVICE in practice.
      const newToken = headerValue(response.headers, /^x-.+-authentication-token$/i);
      if (!newToken) throw upstreamContractError(SERVICE, 'the key was created but no token header came back', response.status);
      return { ...confirmed, token: newToken, label, readOnly };
    },

    async deleteApiKey(id) {
      const response = await transport.request(write('DELETE', { operation: 'deleteApiKey', path: restPath('/api_keys/:id', { id }) }));
      return confirmation(response, 'deleteApiKey');
    },

    async getTrends() {
      const response = await transport.request(read({ operation: 'getTrends', path: '/analytics/trends' }));
      return answer(trendsShape, response, 'getTrends');
    },

    async getLeaderboard({ direction, hashtag, team, startDate, endDate }) {
      const scope = team && ('managerId' in team ? team.managerId : JSON.stringify(team.customProperties));
      const response = await transport.request(
        read({
          operation: 'getLeaderboard',
          path: '/analytics/leaderboards',
          query: { direction, hashtag, scope, start_date: startDate && serviceDate(startDate), end_date: endDate && serviceDate(endDate) },
        }),
      );
      return toLeaderboard(answer(leaderboardShape, response, 'getLeaderboard', quickLeaderboard));
    },

    async getStandouts({ role, value, limit, period, customPropertyName, customPropertyValue }) {
      const response = await transport.request(
        read({
          operation: 'getStandouts',
          path: '/analytics/standouts',
          query: { role, value, limit, period, custom_property_name: customPropertyName, custom_property_value: customPropertyValue },
        }),
      );
      return toLeaderboard(answer(leaderboardShape, response, 'getStandouts', quickLeaderboard));
    },

    async listRewards({ catalogCountry, requestCountry, personalizeFor }) {
      const response = await transport.request(
        read({ operation: 'listRewards', path: '/rewards', query: { catalog_country: catalogCountry, request_country: requestCountry, personalize_for: personalizeFor } }),
      );
      const groups = answer(catalogueShape, response, 'listRewards', quickCatalogue);
      // Carried down so each denomination's full reward is fetched in the catalogue's country.
      if (requestCountry) for (const group of groups) for (const reward of group.rewards) for (const denomination of reward.denominations) (denomination as DenominationDto).request_country = requestCountry;
      return groups;
    },

    async getReward(id, requestCountry) {
      const response = await transport.lookup(read({ operation: 'getReward', path: restPath('/rewards/:id', { id }), query: { request_country: requestCountry } }));
      return response ? answer(rewardShape, response, 'getReward', quickReward) : null;
    },

    requireCredential() {
      credential();
    },

    async getRedemption(id) {
      const response = await transport.lookup(read({ operation: 'getRedemption', path: restPath('/redemptions/:id', { id }) }));
      return response ? answer(redemptionShape, response, 'getRedemption', quickRedemption) : null;
    },

    async listWebhooks() {
      const response = await transport.request(read({ operation: 'listWebhooks', path: '/webhooks' }));
      return answer(webhooksShape, response, 'listWebhooks');
    },

    async createWebhook({ url, eventTypes }) {
      const response = await transport.request(write('POST', { operation: 'createWebhook', path: '/webhooks', body: { json: { url, ...(eventTypes ? { event_types: eventTypes } : {}) } } }));
      return answer(idShape, response, 'createWebhook');
    },

    async updateWebhook(id, { url, eventTypes }) {
      // The documented example sends a JSON-shaped body; JSON with its own content type is what parses everywhere.
      const response = await transport.request(
        write('PUT', {
          operation: 'updateWebhook',
          path: restPath('/webhooks/:id', { id }),
          body: { json: { ...(url !== undefined ? { url } : {}), ...(eventTypes ? { event_types: eventTypes } : {}) } },
        }),
      );
      return answer(idShape, response, 'updateWebhook');
    },

    async deleteWebhook(id) {
      const response = await transport.request(write('DELETE', { operation: 'deleteWebhook', path: restPath('/webhooks/:id', { id }) }));
      // No content: the transport's answer for a deletion an earlier attempt made (docs/ERRORS.md).
      return response.status === 204 && response.body === undefined ? { id } : answer(idShape, response, 'deleteWebhook');
    },

    async teapot() {
      await transport.request(read({ operation: 'teapot', path: '/teapot' }));
    },

    async verifyCredential() {
      // The cheapest read every valid token may make.
      await transport.request(read({ operation: 'verifyCredential', path: '/api_keys' }));
    },
  };
}
