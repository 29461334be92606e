import { SERVICE_ENTRY } from '../../lib/services.ts';
import { missingCredential, upstreamContractError } from '../kit/errors.ts';
import { asArray, asBoolean, asNumber, asRecord, asText, headerValue, toNumber } from '../kit/envelopes.ts';
import type { RestCall, RestTransport } from '../kit/transport.ts';

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
  read_only: boolean;
}

export interface CreatedApiKeyDto {
  success: boolean;
  message: string | null;
  token: string;
  label: string;
  read_only: boolean;
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

function toLeaderboard(body: unknown): LeaderboardEntryDto[] {
  // The leaderboard body is undocumented: accept a bare array or one wrapped in an envelope.
  const list = Array.isArray(body) ? body : asArray(asRecord(body).result ?? asRecord(body).results ?? asRecord(body).leaderboard);
  return list.map((item) => ({ count: asNumber(asRecord(item).count) ?? 0, user: toUser(asRecord(item).user) }));
}

function toRichText(raw: unknown): RichTextDto | null {
  if (!raw || typeof raw !== 'object') return typeof raw === 'string' ? { text: raw, html: null } : null;
  return { text: asText(asRecord(raw).text), html: asText(asRecord(raw).html) };
}

function toReward(raw: unknown): RewardDto {
  const reward = asRecord(raw);
  return {
    id: String(reward.id),
    name: asText(reward.name),
    price: asNumber(reward.price),
    display_price: asText(reward.display_price),
    description: toRichText(reward.description),
    image_url: asText(reward.image_url),
    disclaimer_html: asText(reward.disclaimer_html),
    warning: asText(reward.warning),
    quantity: toNumber(reward.quantity) ?? null,
    type: asText(reward.type),
  };
}

function toRedemption(raw: unknown): RedemptionDto {
  const redemption = asRecord(raw);
  const details = redemption.reward_details ? asRecord(redemption.reward_details) : undefined;
  return {
    id: String(redemption.id),
    created_at: asText(redemption.created_at),
    state: asText(redemption.state),
    certificate_url: asText(redemption.certificate_url),
    claim_url: asText(redemption.claim_url),
    auto_approvable: asBoolean(redemption.auto_approvable),
    reward_details: details
      ? { id: String(details.id), name: asText(details.name), price: asNumber(details.price), display_price: asText(details.display_price), type: asText(details.type), image_url: asText(details.image_url) }
      : null,
  };
}

function toWebhook(raw: unknown): WebhookDto {
  const webhook = asRecord(raw);
  return {
    id: String(webhook.id),
    url: String(webhook.url ?? ''),
    event_types: asArray(webhook.event_types).filter((type): type is WebhookEventTypeDto => WEBHOOK_EVENT_TYPES.includes(type as WebhookEventTypeDto)),
  };
}

function toConfirmation(body: unknown): ConfirmationDto {
  const value = asRecord(body);
  return { success: value.success !== false, message: asText(value.message) };
}

function idOf(body: unknown): string {
  const id = asRecord(body).id;
  if (id === undefined || id === null) throw upstreamContractError(SERVICE, 'the answer carries no id');
  return String(id);
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

const segment = encodeURIComponent;

/**
 * Every recognition endpoint, called from here and nowhere else. Reads carry the token as the
 * documented `access_token` query parameter; writes carry it as a bearer header, because the real
 * service refuses a token that can write when it travels in a URL.
 */
export function createRecognitionClient({ transport, token }: { transport: RestTransport; token: string | undefined }): RecognitionClient {
  function credential(): string {
    if (!token) throw missingCredential(SERVICE, CREDENTIAL_HEADER);
    return token;
  }
  // The fixed properties come first: a literal that starts with a spread makes V8 clone the shape of
  // `call`, which differs at every call site, at about four times the cost per upstream call.
  const read = (call: Omit<RestCall, 'method' | 'secrets'>): RestCall => {
    const secret = credential();
    return { method: 'GET', secrets: [secret], ...call, query: { ...call.query, access_token: secret } };
  };
  const write = (method: RestCall['method'], call: Omit<RestCall, 'method' | 'secrets'>): RestCall => {
    const secret = credential();
    return { method, secrets: [secret], ...call, headers: { ...call.headers, authorization: `Bearer ${secret}` } };
  };

  return {
    async listApiKeys({ userId }) {
      const response = await transport.request(read({ operation: 'listApiKeys', path: '/api_keys', query: { user_id: userId } }));
      return asArray(response.body).map((raw) => {
        const key = asRecord(raw);
        return { id: String(key.id), label: String(key.label ?? ''), read_only: asBoolean(key.read_only) ?? false };
      });
    },

    async createApiKey({ label, readOnly, userId }) {
      // Documented as multipart with no fields: everything travels in the query.
      const response = await transport.request(
        write('POST', { operation: 'createApiKey', path: '/api_keys', query: { label, read_only: readOnly, user_id: userId }, body: { multipart: new FormData() } }),
      );
      // Documented as X-SERVICE-Authentication-Token; the vendor's name replaces SERVICE in practice.
      const newToken = headerValue(response.headers, /^x-.+-authentication-token$/i);
      if (!newToken) throw upstreamContractError(SERVICE, 'the key was created but no token header came back', response.status);
      const confirmation = toConfirmation(response.body);
      return { ...confirmation, token: newToken, label, read_only: readOnly };
    },

    async deleteApiKey(id) {
      const response = await transport.request(write('DELETE', { operation: 'deleteApiKey', path: `/api_keys/${segment(id)}` }));
      return toConfirmation(response.body);
    },

    async getTrends() {
      const response = await transport.request(read({ operation: 'getTrends', path: '/analytics/trends' }));
      return asArray(response.body).map((raw) => ({ hashtag: String(asRecord(raw).hashtag ?? ''), count: asNumber(asRecord(raw).count) ?? 0 }));
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
      return toLeaderboard(response.body);
    },

    async getStandouts({ role, value, limit, period, customPropertyName, customPropertyValue }) {
      const response = await transport.request(
        read({
          operation: 'getStandouts',
          path: '/analytics/standouts',
          query: { role, value, limit, period, custom_property_name: customPropertyName, custom_property_value: customPropertyValue },
        }),
      );
      return toLeaderboard(response.body);
    },

    async listRewards({ catalogCountry, requestCountry, personalizeFor }) {
      const response = await transport.request(
        read({ operation: 'listRewards', path: '/rewards', query: { catalog_country: catalogCountry, request_country: requestCountry, personalize_for: personalizeFor } }),
      );
      return asArray(response.body).map((raw) => {
        const group = asRecord(raw);
        const rewards = asRecord(group.rewards);
        return {
          type: String(group.type ?? ''),
          name: String(group.name ?? ''),
          rewards: asArray(Array.isArray(group.rewards) ? group.rewards : rewards.items).map((rawItem) => {
            const item = asRecord(rawItem);
            return {
              name: String(item.name ?? ''),
              image_url: asText(item.image_url),
              minimum_display_price: asText(item.minimum_display_price),
              description: toRichText(item.description),
              disclaimer_html: asText(item.disclaimer_html),
              warning: asText(item.warning),
              denominations: asArray(item.denominations).map((rawDenomination) => {
                const denomination = asRecord(rawDenomination);
                return {
                  id: String(denomination.id),
                  name: asText(denomination.name),
                  price: asNumber(denomination.price),
                  display_price: asText(denomination.display_price),
                  ...(requestCountry ? { request_country: requestCountry } : {}),
                };
              }),
            };
          }),
        };
      });
    },

    async getReward(id, requestCountry) {
      const response = await transport.lookup(read({ operation: 'getReward', path: `/rewards/${segment(id)}`, query: { request_country: requestCountry } }));
      return response ? toReward(response.body) : null;
    },

    requireCredential() {
      credential();
    },

    async getRedemption(id) {
      const response = await transport.lookup(read({ operation: 'getRedemption', path: `/redemptions/${segment(id)}` }));
      return response ? toRedemption(response.body) : null;
    },

    async listWebhooks() {
      const response = await transport.request(read({ operation: 'listWebhooks', path: '/webhooks' }));
      return asArray(response.body).map(toWebhook);
    },

    async createWebhook({ url, eventTypes }) {
      const response = await transport.request(write('POST', { operation: 'createWebhook', path: '/webhooks', body: { json: { url, ...(eventTypes ? { event_types: eventTypes } : {}) } } }));
      return { id: idOf(response.body) };
    },

    async updateWebhook(id, { url, eventTypes }) {
      // The documented example sends a JSON-shaped body; JSON with its own content type is what parses everywhere.
      const response = await transport.request(
        write('PUT', {
          operation: 'updateWebhook',
          path: `/webhooks/${segment(id)}`,
          body: { json: { ...(url !== undefined ? { url } : {}), ...(eventTypes ? { event_types: eventTypes } : {}) } },
        }),
      );
      return { id: idOf(response.body) };
    },

    async deleteWebhook(id) {
      const response = await transport.request(write('DELETE', { operation: 'deleteWebhook', path: `/webhooks/${segment(id)}` }));
      return { id: idOf(response.body) };
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
