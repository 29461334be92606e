import { readInt, type Env } from '../../lib/config.ts';
import { createClock, type EmulatorDefinition, type EmulatorClock } from '../kit/emulator.ts';
import { fieldsBody, jsonBody } from '../kit/bodies.ts';
import type { Reply, Route, RouteRequest } from '../kit/router.ts';
import { uuidFrom, seededRandom } from '../kit/random.ts';
import { COUNTRIES, GROUP_NAMES, HASHTAGS, seedRecognition, type EmulatedBonus, type EmulatedKey, type EmulatedUser, type RecognitionState } from './data.ts';
import { createWebhookDeliverer } from '../kit/webhooks.ts';
import { presentCatalogueEntry, presentRedemption, presentReward, presentUser } from './presenters.ts';

const API = '/api/v1';
const EVENT_TYPES = ['bonus.created', 'achievement_event.created'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = 24 * 60 * 60 * 1000;

/** The service's own header name; clients must match any `x-*-authentication-token`. */
const NEW_TOKEN_HEADER = 'X-Recognition-Authentication-Token';

const UNAUTHORIZED: Reply = { status: 401, body: { success: false, message: 'Bad or missing access token' } };
const NOT_READY: Reply = { status: 449, body: { message: 'Analytics data is not ready yet. Please retry in 5 minutes.' } };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * How the real service answers where it deviates from the spec (sources in
 * docs/services/recognition.md): answers wrapped in `{success: true, result}`, failures as
 * `{success: false, message}`, and a catalogue group's rewards as a bare array, not `{items}`.
 */
function toRealDialect(reply: Reply, request: RouteRequest): Reply {
  if (reply.body === undefined) return reply;
  if (reply.status >= 400) return isRecord(reply.body) && !('success' in reply.body) ? { ...reply, body: { success: false, ...reply.body } } : reply;
  if (isRecord(reply.body) && 'success' in reply.body) return reply;
  let result = reply.body;
  if (request.method === 'GET' && request.path === `${API}/rewards` && Array.isArray(result)) {
    result = result.map((group: Record<string, unknown>) => ({ ...group, rewards: (group.rewards as { items: unknown[] }).items }));
  }
  return { ...reply, body: { success: true, result } };
}

interface Caller {
  key: EmulatedKey;
  user: EmulatedUser;
}

export interface RecognitionEmulatorOptions {
  clock?: EmulatorClock;
  /** Wait before retrying a failed webhook delivery, doubled each time. @default 500 */
  deliveryRetryMs?: number;
}

export interface RecognitionEmulator extends EmulatorDefinition {
  state(): RecognitionState;
}

/** The emulator's settings: how long its first webhook redelivery waits. */
export function readRecognitionEmulatorOptions(env: Env): RecognitionEmulatorOptions {
  return { deliveryRetryMs: readInt(env, 'RECOGNITION_EMULATOR_RETRY_MS', 500, { min: 1, max: 60_000 }) };
}

export function createRecognitionEmulator({ clock = createClock(), deliveryRetryMs = 500 }: RecognitionEmulatorOptions = {}): RecognitionEmulator {
  let state = seedRecognition(clock.now());
  let ids = seededRandom(7);
  let eventNumber = 0;
  const deliverer = createWebhookDeliverer({ retryMs: deliveryRetryMs });

  /** Webhook deliveries carry users as a viewer outside the company would see them: no balances. */
  const OUTSIDER = { id: '', admin: false } as EmulatedUser;

  function publish(type: string, data: Record<string, unknown>): string {
    eventNumber += 1;
    const id = `evt_${String(eventNumber).padStart(6, '0')}`;
    const body = { id, type, created_at: new Date(clock.now()).toISOString(), data };
    for (const webhook of state.webhooks) {
      if (webhook.event_types.includes(type)) deliverer.deliver({ webhookId: webhook.id, url: webhook.url }, { id, type, body });
    }
    return id;
  }

  function presentBonus(bonus: EmulatedBonus): Record<string, unknown> {
    const userById = (id: string) => state.users.find((user) => user.id === id)!;
    return {
      id: bonus.id,
      created_at: bonus.created_at,
      reason: bonus.reason,
      amount: bonus.amount,
      amount_with_currency: `${bonus.amount} points`,
      value: bonus.hashtag,
      hashtag: bonus.hashtag,
      giver: presentUser(userById(bonus.giver_id), OUTSIDER),
      receivers: bonus.receiver_ids.map((id) => presentUser(userById(id), OUTSIDER)),
    };
  }

  /**
   * Reads accept the token in the query or as a bearer token. Writes must use the bearer header:
   * the real service refuses a token that can write when it travels in a URL.
   */
  function authenticate(request: RouteRequest, write: boolean): Caller | Reply {
    const header = String(request.headers.authorization ?? '');
    const bearer = /^bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
    const token = bearer ?? (write ? undefined : request.query.get('access_token') ?? undefined);
    const key = token ? state.keys.find((candidate) => candidate.token === token) : undefined;
    const user = key && state.users.find((candidate) => candidate.id === key.user_id);
    if (!key || !user) return UNAUTHORIZED;
    if (write && key.read_only) return { status: 403, body: { success: false, message: 'This access token is read-only' } };
    return { key, user };
  }

  /** Admins may act on another user of the company; anyone else only on themself. */
  function actingUser(request: RouteRequest, caller: Caller): EmulatedUser | Reply {
    const userId = request.query.get('user_id');
    if (!userId || userId === caller.user.id) return caller.user;
    if (!caller.user.admin) return { status: 403, body: { success: false, message: 'Only admins may pass user_id' } };
    const user = state.users.find((candidate) => candidate.id === userId);
    return user ?? { status: 404, body: { success: false, message: 'User not found' } };
  }

  const isReply = (value: unknown): value is Reply => typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number';

  function parseDate(text: string | null, name: string): number | Reply | undefined {
    if (text === null || text === '') return undefined;
    const match = /^(\d{2}) ([A-Z][a-z]{2}) (\d{4})$/.exec(text);
    const month = match ? MONTHS.indexOf(match[2]!) : -1;
    if (!match || month < 0) return { status: 400, body: { message: `Invalid ${name}: expected a date like 05 Jan 2026` } };
    return Date.UTC(Number(match[3]), month, Number(match[1]));
  }

  function teamOf(scope: string | null): Set<string> | Reply | undefined {
    if (!scope) return undefined;
    if (scope.trim().startsWith('{')) {
      let properties: unknown;
      try {
        properties = JSON.parse(scope);
      } catch {
        return { status: 400, body: { message: 'Invalid scope: not valid JSON' } };
      }
      if (!properties || typeof properties !== 'object' || Array.isArray(properties)) {
        return { status: 400, body: { message: 'Invalid scope: expected an object of custom properties' } };
      }
      const wanted = Object.entries(properties as Record<string, unknown>);
      return new Set(state.users.filter((user) => wanted.every(([name, value]) => user.custom[name] === String(value))).map((user) => user.id));
    }
    return new Set(state.users.filter((user) => user.manager_id === scope).map((user) => user.id));
  }

  function rank(options: { direction: 'received' | 'given'; hashtag?: string; from: number; to: number; team?: Set<string>; limit: number; viewer: EmulatedUser }) {
    const counts = new Map<string, number>();
    for (const bonus of state.bonuses) {
      const at = Date.parse(bonus.created_at);
      if (at < options.from || at > options.to) continue;
      if (options.hashtag && bonus.hashtag.toLowerCase() !== options.hashtag.toLowerCase()) continue;
      const ids = options.direction === 'given' ? [bonus.giver_id] : bonus.receiver_ids;
      for (const id of ids) {
        if (options.team && !options.team.has(id)) continue;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    return [...counts.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, options.limit)
      .map(([id, count]) => ({ count, user: presentUser(state.users.find((user) => user.id === id)!, options.viewer) }));
  }

  const normaliseHashtag = (value: string | null) => (value ? (value.startsWith('#') ? value : `#${value}`) : undefined);

  function findReward(id: string) {
    for (const item of state.catalogue) {
      const denomination = item.denominations.find((candidate) => candidate.id === id);
      if (denomination) return { item, denomination };
    }
    return undefined;
  }

  function eventTypesOf(value: unknown, required: boolean): string[] | Reply {
    if (value === undefined || value === null) return required ? EVENT_TYPES : [];
    const list = Array.isArray(value) ? value : [value];
    const unknown = list.filter((type) => !EVENT_TYPES.includes(String(type)));
    if (unknown.length) return { status: 400, body: { message: `event_types may contain only ${EVENT_TYPES.join(', ')}; got ${unknown.join(', ')}` } };
    return list.map(String);
  }

  const routes: Route[] = [
    {
      method: 'GET',
      path: `${API}/api_keys`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        const user = actingUser(request, caller);
        if (isReply(user)) return user;
        return { status: 200, body: state.keys.filter((key) => key.user_id === user.id).map(({ id, label, read_only }) => ({ id, label, read_only })) };
      },
    },
    {
      method: 'POST',
      path: `${API}/api_keys`,
      handler: (request) => {
        const caller = authenticate(request, true);
        if (isReply(caller)) return caller;
        const user = actingUser(request, caller);
        if (isReply(user)) return user;
        const label = request.query.get('label') ?? '';
        if (label.trim() === '') return { status: 400, body: { success: false, message: "Label can't be blank" } };
        const token = `key-${uuidFrom(ids).replace(/-/g, '')}`;
        state.keys.push({ id: uuidFrom(ids), label, read_only: request.query.get('read_only') === 'true', token, user_id: user.id });
        return { status: 201, body: { success: true, message: 'API key created' }, headers: { [NEW_TOKEN_HEADER]: token } };
      },
    },
    {
      method: 'DELETE',
      path: `${API}/api_keys/:id`,
      handler: (request) => {
        const caller = authenticate(request, true);
        if (isReply(caller)) return caller;
        const key = state.keys.find((candidate) => candidate.id === request.params.id);
        if (!key || (key.user_id !== caller.user.id && !caller.user.admin)) {
          return { status: 404, body: { success: false, message: 'API key not found' } };
        }
        state.keys = state.keys.filter((candidate) => candidate !== key);
        return { status: 200, body: { success: true, message: 'API key destroyed' } };
      },
    },
    {
      method: 'GET',
      path: `${API}/analytics/trends`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        if (!state.analyticsReady) return NOT_READY;
        const since = clock.now() - 30 * DAY;
        const counts = new Map<string, number>();
        for (const bonus of state.bonuses) {
          if (Date.parse(bonus.created_at) >= since) counts.set(bonus.hashtag, (counts.get(bonus.hashtag) ?? 0) + 1);
        }
        const trends = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
        // The service sends counts as text.
        return { status: 200, body: trends.map(([hashtag, count]) => ({ hashtag, count: String(count) })) };
      },
    },
    {
      method: 'GET',
      path: `${API}/analytics/leaderboards`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        if (!state.analyticsReady) return NOT_READY;
        const direction = request.query.get('direction') ?? 'received';
        if (direction !== 'received' && direction !== 'given') return { status: 400, body: { message: 'direction must be received or given' } };
        const today = clock.now();
        const from = parseDate(request.query.get('start_date'), 'start_date');
        if (isReply(from)) return from;
        const to = parseDate(request.query.get('end_date'), 'end_date');
        if (isReply(to)) return to;
        const team = teamOf(request.query.get('scope'));
        if (isReply(team)) return team;
        const entries = rank({
          direction,
          hashtag: normaliseHashtag(request.query.get('hashtag')),
          from: from ?? today - 30 * DAY,
          // An end date includes the whole of that day.
          to: to === undefined ? today : to + DAY - 1,
          team,
          limit: 100,
          viewer: caller.user,
        });
        return { status: 200, body: entries };
      },
    },
    {
      method: 'GET',
      path: `${API}/analytics/standouts`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        if (!state.analyticsReady) return NOT_READY;
        const limitText = request.query.get('limit');
        const limit = limitText === null ? 10 : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) return { status: 400, body: { message: 'limit must satisfy 1 <= limit <= 100' } };
        const role = request.query.get('role') ?? 'receiver';
        const periods: Record<string, number> = { week: 7, month: 30, quarter: 91, year: 365 };
        const period = request.query.get('period') ?? 'month';
        if (!['receiver', 'giver'].includes(role) || !(period in periods)) return { status: 400, body: { message: 'Invalid parameters' } };
        const propertyName = request.query.get('custom_property_name');
        const propertyValue = request.query.get('custom_property_value');
        const team = propertyName
          ? new Set(state.users.filter((user) => propertyValue === null || user.custom[propertyName] === propertyValue).map((user) => user.id))
          : undefined;
        const today = clock.now();
        return {
          status: 200,
          body: rank({
            direction: role === 'giver' ? 'given' : 'received',
            hashtag: normaliseHashtag(request.query.get('value')),
            from: today - periods[period]! * DAY,
            to: today,
            team,
            limit,
            viewer: caller.user,
          }),
        };
      },
    },
    {
      method: 'GET',
      path: `${API}/rewards`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        const invalid = ['catalog_country', 'request_country'].filter((name) => {
          const value = request.query.get(name);
          return value !== null && !(value in COUNTRIES);
        });
        const personalizeFor = request.query.get('personalize_for');
        if (personalizeFor !== null && !state.users.some((user) => user.id === personalizeFor)) invalid.push('personalize_for');
        if (invalid.length) return { status: 400, body: { message: `The following params are invalid: ${invalid.join(', ')}` } };
        const country = request.query.get('request_country') ?? request.query.get('catalog_country');
        const groups = Object.entries(GROUP_NAMES).map(([type, name]) => ({
          type,
          name,
          rewards: { items: state.catalogue.filter((item) => item.type === type).map((item) => presentCatalogueEntry(item, country)) },
        }));
        return { status: 200, body: groups };
      },
    },
    {
      method: 'GET',
      path: `${API}/rewards/:id`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        const found = findReward(request.params.id!);
        if (!found) return { status: 404, body: { message: 'Object not found' } };
        const country = request.query.get('request_country');
        if (country !== null && !(country in COUNTRIES)) return { status: 400, body: { message: 'The following params are invalid: request_country' } };
        return { status: 200, body: presentReward(found.item, found.denomination, country) };
      },
    },
    {
      method: 'GET',
      path: `${API}/redemptions/:id`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        const redemption = state.redemptions.find((candidate) => candidate.id === request.params.id);
        const found = redemption && findReward(redemption.reward_id);
        // The service answers a missing redemption with an empty 404.
        if (!redemption || !found) return { status: 404 };
        return { status: 200, body: presentRedemption(redemption, found.item, found.denomination) };
      },
    },
    {
      method: 'GET',
      path: `${API}/webhooks`,
      handler: (request) => {
        const caller = authenticate(request, false);
        if (isReply(caller)) return caller;
        return { status: 200, body: state.webhooks };
      },
    },
    {
      method: 'POST',
      path: `${API}/webhooks`,
      handler: (request) => {
        const caller = authenticate(request, true);
        if (isReply(caller)) return caller;
        const body = jsonBody(request) as Record<string, unknown> | undefined;
        if (!body || typeof body.url !== 'string' || body.url.trim() === '') return { status: 400, body: { message: 'url is required' } };
        const eventTypes = eventTypesOf(body.event_types, true);
        if (isReply(eventTypes)) return eventTypes;
        const id = `wh_${uuidFrom(ids).slice(0, 8)}`;
        state.webhooks.push({ id, url: body.url, event_types: eventTypes.length ? eventTypes : EVENT_TYPES });
        return { status: 200, body: { id } };
      },
    },
    {
      method: 'PUT',
      path: `${API}/webhooks/:webhook_id`,
      handler: async (request) => {
        const caller = authenticate(request, true);
        if (isReply(caller)) return caller;
        const webhook = state.webhooks.find((candidate) => candidate.id === request.params.webhook_id);
        if (!webhook) return { status: 404, body: { message: 'Webhook not found' } };
        const body = (await fieldsBody(request)) ?? {};
        if ('url' in body && (typeof body.url !== 'string' || body.url.trim() === '')) return { status: 400, body: { message: 'url must not be empty' } };
        const eventTypes = eventTypesOf(body.event_types, false);
        if (isReply(eventTypes)) return eventTypes;
        if (typeof body.url === 'string') webhook.url = body.url;
        if (eventTypes.length) webhook.event_types = eventTypes;
        return { status: 200, body: { id: webhook.id } };
      },
    },
    {
      method: 'DELETE',
      path: `${API}/webhooks/:webhook_id`,
      handler: (request) => {
        const caller = authenticate(request, true);
        if (isReply(caller)) return caller;
        const webhook = state.webhooks.find((candidate) => candidate.id === request.params.webhook_id);
        if (!webhook) return { status: 404, body: { message: 'Webhook not found' } };
        state.webhooks = state.webhooks.filter((candidate) => candidate !== webhook);
        return { status: 200, body: { id: webhook.id } };
      },
    },
    {
      method: 'GET',
      path: `${API}/teapot`,
      handler: () => ({ status: 418, body: { message: "I'm a teapot" } }),
    },
  ];

  const userExists = (id: unknown) => typeof id === 'string' && state.users.some((user) => user.id === id);

  const controls: Route[] = [
    {
      method: 'POST',
      path: '/__emulator/bonuses',
      handler: (request) => {
        const body = (jsonBody(request) ?? {}) as { giver_id?: unknown; receiver_ids?: unknown; amount?: unknown; hashtag?: unknown; reason?: unknown };
        const giverId = body.giver_id ?? 'usr_001';
        const receiverIds = Array.isArray(body.receiver_ids) ? body.receiver_ids : ['usr_002'];
        if (!userExists(giverId) || !receiverIds.every(userExists)) return { status: 400, body: { message: 'giver_id and receiver_ids must name users of the company' } };
        const hashtag = typeof body.hashtag === 'string' ? (body.hashtag.startsWith('#') ? body.hashtag : `#${body.hashtag}`) : HASHTAGS[0]!;
        const amount = typeof body.amount === 'number' ? body.amount : 10;
        const bonus: EmulatedBonus = {
          id: `bon_${String(state.bonuses.length + 1).padStart(4, '0')}`,
          created_at: new Date(clock.now()).toISOString(),
          giver_id: giverId as string,
          receiver_ids: receiverIds as string[],
          amount,
          hashtag,
          reason: typeof body.reason === 'string' ? body.reason : `+${amount} for the help ${hashtag}`,
        };
        state.bonuses.push(bonus);
        const presented = presentBonus(bonus);
        const eventId = publish('bonus.created', presented);
        return { status: 201, body: { event_id: eventId, bonus: presented } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/achievements',
      handler: (request) => {
        const body = (jsonBody(request) ?? {}) as { receiver_id?: unknown; title?: unknown; headline?: unknown; importance?: unknown; bonus_id?: unknown };
        const receiverId = body.receiver_id ?? 'usr_002';
        if (!userExists(receiverId)) return { status: 400, body: { message: 'receiver_id must name a user of the company' } };
        const receiver = state.users.find((user) => user.id === receiverId)!;
        const achievement = {
          id: `ach_${uuidFrom(ids).slice(0, 8)}`,
          headline: typeof body.headline === 'string' ? body.headline : `${receiver.first_name} earned an achievement`,
          title: typeof body.title === 'string' ? body.title : 'Team player',
          importance: typeof body.importance === 'number' ? body.importance : 1,
          bonus_id: typeof body.bonus_id === 'string' ? body.bonus_id : null,
          receiver: presentUser(receiver, OUTSIDER),
        };
        const eventId = publish('achievement_event.created', achievement);
        return { status: 201, body: { event_id: eventId, achievement } };
      },
    },
    { method: 'GET', path: '/__emulator/deliveries', handler: () => ({ status: 200, body: deliverer.deliveries() }) },
    {
      method: 'POST',
      path: '/__emulator/analytics',
      handler: (request) => {
        const body = jsonBody(request) as { ready?: unknown } | undefined;
        if (typeof body?.ready !== 'boolean') return { status: 400, body: { message: 'expected {"ready": true|false}' } };
        state.analyticsReady = body.ready;
        return { status: 200, body: { ready: state.analyticsReady } };
      },
    },
  ];

  return {
    name: 'recognition',
    clock,
    routes,
    controls,
    reset: () => {
      state = seedRecognition(clock.now());
      ids = seededRandom(7);
      eventNumber = 0;
      deliverer.reset();
    },
    dispose: () => {
      void deliverer.close();
    },
    realDialect: toRealDialect,
    state: () => state,
  };
}
