// The live recognition dashboard: two subscriptions over graphql-ws, two queries over HTTP.
// It resumes each subscription from the last event it rendered, so a lost connection costs
// nothing: the gateway replays what the event log holds after that cursor.

const { createClient } = window.graphqlWs;

const TOKEN_KEY = 'recognition-dashboard-token';
const REFUSED = new Set(['UNAUTHENTICATED', 'FORBIDDEN']);
const MAX_FEED = 200;
const REFRESH_MS = 1000;
const MAX_SEEN = 5000;

const BONUSES = `subscription Bonuses($filter: BonusFilter, $after: String) {
  bonusCreated(filter: $filter, after: $after) {
    id cursor occurredAt
    bonus { id createdAt reason amount hashtag giver { displayName } receivers { displayName } }
  }
}`;
const ACHIEVEMENTS = `subscription Achievements($after: String) {
  achievementEarned(after: $after) {
    id cursor occurredAt
    achievement { id title headline importance receiver { displayName } }
  }
}`;
const BOARDS = `query Boards { leaderboard { count user { displayName } } hashtagTrends { hashtag count } }`;

const $ = (id) => document.getElementById(id);
const state = {
  token: '',
  hashtag: '',
  bonusCursor: null,
  achievementCursor: null,
  seen: new Set(),
  client: null,
  generation: 0,
  attempt: 0,
  retryTimer: null,
  stopBonuses: null,
  refresh: { timer: null, pending: false },
};

function setStatus(kind, text) {
  const status = $('status');
  status.dataset.state = kind;
  status.textContent = text;
}

const normaliseHashtag = (value) => value.trim().replace(/^#/, '').toLowerCase();
const matchesFilter = (hashtag) => !state.hashtag || normaliseHashtag(hashtag ?? '') === normaliseHashtag(state.hashtag);
const nameOf = (user) => user?.displayName ?? 'someone';
const codeOf = (errors) => errors?.find((error) => error?.extensions?.code)?.extensions.code ?? 'ERROR';

/** Remembers an event id; the oldest are forgotten, since resuming by cursor never goes back that far. */
function firstSight(id) {
  if (state.seen.has(id)) return false;
  state.seen.add(id);
  if (state.seen.size > MAX_SEEN) state.seen.delete(state.seen.values().next().value);
  return true;
}

function timeElement(iso) {
  const time = document.createElement('time');
  time.dateTime = iso;
  time.textContent = new Date(iso).toLocaleString();
  return time;
}

function paragraph(...parts) {
  const p = document.createElement('p');
  p.append(...parts);
  return p;
}

function renderBonus(event) {
  if (!firstSight(event.id)) return;
  state.bonusCursor = event.cursor;
  const { bonus } = event;
  const item = document.createElement('li');
  item.dataset.eventId = event.id;
  item.dataset.hashtag = bonus.hashtag ?? '';
  const giver = document.createElement('strong');
  giver.textContent = nameOf(bonus.giver);
  const tag = document.createElement('span');
  tag.className = 'hashtag';
  tag.textContent = bonus.hashtag ?? '';
  item.append(
    paragraph(giver, ` gave +${bonus.amount ?? 0} to ${bonus.receivers.map(nameOf).join(', ')} `, tag),
    paragraph(bonus.reason ?? ''),
    paragraph(timeElement(bonus.createdAt ?? event.occurredAt)),
  );
  const at = bonus.createdAt ?? event.occurredAt;
  item.dataset.at = at;
  // Newest first by when the bonus was given: a redelivered bonus arrives late but takes its place.
  const feed = $('feed');
  const older = [...feed.children].find((other) => other.dataset.at <= at);
  feed.insertBefore(item, older ?? null);
  while (feed.children.length > MAX_FEED) feed.lastElementChild.remove();
  $('feed-empty').hidden = true;
  scheduleRefresh();
}

function renderAchievement(event) {
  if (!firstSight(event.id)) return;
  state.achievementCursor = event.cursor;
  const { achievement } = event;
  const item = document.createElement('li');
  item.dataset.eventId = event.id;
  const title = document.createElement('strong');
  title.textContent = achievement.title ?? 'Achievement';
  item.append(paragraph(title, ` for ${nameOf(achievement.receiver)}`), paragraph(achievement.headline ?? ''), paragraph(timeElement(event.occurredAt)));
  const list = $('achievements');
  list.prepend(item);
  while (list.children.length > MAX_FEED) list.lastElementChild.remove();
}

/** A refused credential stops everything: retrying it would only be refused again. */
function refuse(code) {
  disconnect();
  setStatus('error', `error: ${code} (the credential was refused; enter another)`);
}

function onErrors(errors) {
  const code = codeOf(errors);
  if (REFUSED.has(code)) return refuse(code);
  setStatus('error', `error: ${code}`);
  scheduleReconnect();
}

function subscribeBonuses() {
  state.stopBonuses?.();
  const variables = { filter: state.hashtag ? { hashtag: state.hashtag } : null, after: state.bonusCursor };
  state.stopBonuses = state.client.subscribe(
    { query: BONUSES, variables },
    {
      next: (result) => (result.errors?.length ? onErrors(result.errors) : renderBonus(result.data.bonusCreated)),
      // A close is handled once, by the client's `closed` listener; an array is the server refusing the operation.
      error: (error) => Array.isArray(error) && onErrors(error),
      complete: () => {},
    },
  );
}

function subscribeAchievements() {
  state.client.subscribe(
    { query: ACHIEVEMENTS, variables: { after: state.achievementCursor } },
    {
      next: (result) => (result.errors?.length ? onErrors(result.errors) : renderAchievement(result.data.achievementEarned)),
      error: (error) => Array.isArray(error) && onErrors(error),
      complete: () => {},
    },
  );
}

function disconnect() {
  state.generation += 1;
  clearTimeout(state.retryTimer);
  state.retryTimer = null;
  state.stopBonuses = null;
  const client = state.client;
  state.client = null;
  client?.dispose();
}

function scheduleReconnect() {
  if (state.retryTimer || !state.token) return;
  const generation = state.generation;
  const wait = Math.min(10_000, 500 * 2 ** state.attempt) * (0.5 + Math.random() / 2);
  state.attempt += 1;
  setStatus('reconnecting', `reconnecting (attempt ${state.attempt})`);
  state.retryTimer = setTimeout(() => {
    state.retryTimer = null;
    if (generation === state.generation) connect();
  }, wait);
}

function connect() {
  disconnect();
  if (!state.token) return setStatus('idle', 'not connected: enter a credential');
  const generation = state.generation;
  const url = new URL('/graphql', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  setStatus(state.attempt ? 'reconnecting' : 'connecting', state.attempt ? `reconnecting (attempt ${state.attempt})` : 'connecting');
  state.client = createClient({
    url: url.href,
    connectionParams: { 'x-recognition-token': state.token },
    lazy: false,
    // Reconnection is ours: graphql-ws would resubscribe with the first cursor, not the last one rendered.
    retryAttempts: 0,
    keepAlive: 15_000,
    on: {
      connected: () => {
        if (generation !== state.generation) return;
        state.attempt = 0;
        setStatus('connected', 'connected');
        scheduleRefresh();
      },
      closed: (event) => {
        if (generation !== state.generation) return;
        if (event?.code === 4401 || event?.code === 4403) return refuse(event.code === 4401 ? 'UNAUTHENTICATED' : 'FORBIDDEN');
        state.client = null;
        scheduleReconnect();
      },
    },
  });
  subscribeBonuses();
  subscribeAchievements();
}

async function refreshBoards() {
  if (!state.token) return;
  let body;
  try {
    const response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-recognition-token': state.token },
      body: JSON.stringify({ query: BOARDS }),
    });
    body = await response.json();
  } catch {
    return; // The subscriptions' status already tells the user the gateway is unreachable.
  }
  const code = body.errors?.length ? codeOf(body.errors) : null;
  if (code && REFUSED.has(code)) return refuse(code);
  renderList('leaderboard', body.data?.leaderboard, (entry) => `${nameOf(entry.user)}: ${entry.count}`, code);
  renderTrends(body.data?.hashtagTrends, code);
}

function note(id, text) {
  const element = $(id);
  element.hidden = !text;
  element.textContent = text ?? '';
}

function renderList(id, entries, label, code) {
  note(`${id}-note`, entries ? null : `unavailable (${code ?? 'no data'})`);
  if (!entries) return;
  $(id).replaceChildren(
    ...entries.slice(0, 10).map((entry) => {
      const item = document.createElement('li');
      item.textContent = label(entry);
      return item;
    }),
  );
}

function renderTrends(trends, code) {
  note('trends-note', trends ? null : `unavailable (${code ?? 'no data'})`);
  if (!trends) return;
  $('trends').replaceChildren(
    ...trends.slice(0, 10).map((trend) => {
      const row = document.createElement('tr');
      for (const text of [trend.hashtag, String(trend.count)]) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
}

/** At most one refresh a second, however many bonuses arrive; the last arrival is never skipped. */
function scheduleRefresh() {
  if (state.refresh.timer) {
    state.refresh.pending = true;
    return;
  }
  void refreshBoards();
  state.refresh.timer = setTimeout(() => {
    state.refresh.timer = null;
    if (state.refresh.pending) {
      state.refresh.pending = false;
      scheduleRefresh();
    }
  }, REFRESH_MS);
}

function applyFilter(hashtag) {
  state.hashtag = hashtag.trim();
  for (const item of [...$('feed').children]) {
    if (!matchesFilter(item.dataset.hashtag)) item.remove();
  }
  $('feed-empty').hidden = $('feed').children.length > 0;
  if (state.client) subscribeBonuses();
}

$('credential-form').addEventListener('submit', (event) => {
  event.preventDefault();
  state.token = $('token').value.trim();
  sessionStorage.setItem(TOKEN_KEY, state.token);
  state.attempt = 0;
  connect();
});
$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = '';
  $('token').value = '';
  disconnect();
  setStatus('idle', 'not connected: enter a credential');
});
$('filter-form').addEventListener('submit', (event) => {
  event.preventDefault();
  applyFilter($('hashtag').value);
});
$('clear-filter').addEventListener('click', () => {
  $('hashtag').value = '';
  applyFilter('');
});

state.token = sessionStorage.getItem(TOKEN_KEY) ?? $('token').value.trim();
if (state.token) {
  $('token').value = state.token;
  sessionStorage.setItem(TOKEN_KEY, state.token);
  connect();
} else {
  setStatus('idle', 'not connected: enter a credential');
}
