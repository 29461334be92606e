import { createHmac, randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { GraphQLError } from 'graphql';
import { sendJson } from '../../lib/http.ts';
import type { Logger } from '../../lib/logger.ts';
import { DOWNLOADS_PATH } from '../../lib/downloads.ts';
import type { SubgraphRoute } from './server.ts';
import { ErrorCode } from './errors.ts';

/**
 * A download link's id is random and unguessable; what it stands for (including the caller's
 * credential) stays server-side until it expires, so the URL itself carries nothing secret: in the
 * subgraph's memory, or with `REDIS_URL` in Redis (`./redisDownloads.ts`) so any replica serves it.
 */
export { DOWNLOADS_PATH, GATEWAY_ORIGIN_HEADER } from '../../lib/downloads.ts';

/** What a link's id looks like: anything else is no link, looked up nowhere. */
export const DOWNLOAD_ID = /^[A-Za-z0-9_-]{32,64}$/;

/** A new link's id: 192 random bits. */
export const newDownloadId = (): string => randomBytes(24).toString('base64url');

export interface DownloadStore<T> {
  /** A link to `value`; a store may hand out a live link it issued for an equal value again. */
  issue(value: T): Promise<{ id: string; expiresAt: number }>;
  /** The value behind a live id; `expired` while a dead one is still remembered (one more lifetime). */
  find(id: string): Promise<T | 'expired' | undefined>;
  close(): Promise<void>;
}

/** How many links a store keeps, and whose they are: the same in memory and in Redis. */
export interface DownloadBounds<T> {
  /** Links kept at most, over every owner, live and recently expired. @default 10000 */
  maxEntries?: number;
  /** Links one owner keeps at most; past it, that owner's own oldest go first. @default 1000 */
  maxEntriesPerOwner?: number;
  /**
   * Whom a link belongs to: links are counted and given up per owner, known only by a keyed digest.
   * @default the value's `credential` when it has one (the caller who asked for the link), else the value
   */
  ownerOf?: (value: T) => unknown;
}

export interface DownloadStoreOptions<T> extends DownloadBounds<T> {
  /** How long a link works. */
  ttlMs: number;
  /** @default Date.now */
  now?: () => number;
}

/** What every link value issued here holds beside what it opens (`LabelsPdfDownload`): the caller's credential. */
const credentialOf = (value: unknown): unknown => (value !== null && typeof value === 'object' && 'credential' in value ? value.credential : value);

/** One text for equal values whatever the order of their keys, so that equal values digest alike. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.keys(inner).sort().map((key) => [key, (inner as Record<string, unknown>)[key]]))
      : inner,
  ) ?? '';

/**
 * A doubly linked list: first, last and any node in O(1). A Map or Set read from its front after
 * deletions there walks past every deleted slot until V8 compacts it, which a FIFO does constantly.
 */
interface Node<V> {
  value: V;
  prev: Node<V> | undefined;
  next: Node<V> | undefined;
}

class List<V> {
  first: Node<V> | undefined;
  last: Node<V> | undefined;
  size = 0;

  push(value: V): Node<V> {
    const node: Node<V> = { value, prev: this.last, next: undefined };
    if (this.last) this.last.next = node;
    else this.first = node;
    this.last = node;
    this.size++;
    return node;
  }

  remove(node: Node<V>): void {
    if (node.prev) node.prev.next = node.next;
    else this.first = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.last = node.prev;
    node.prev = node.next = undefined;
    this.size--;
  }
}

interface Link<T> {
  id: string;
  value: T;
  expiresAt: number;
  owner: Owner<T>;
  /** The digest of its value: an equal value asked for again is handed this link. */
  key: string;
  /** Its place among all links, in the order issued. */
  inStore: Node<Link<T>>;
  /** Its place among its owner's links, oldest first. */
  inOwner: Node<Link<T>>;
}

interface Owner<T> {
  digest: string;
  links: List<Link<T>>;
  /** Its place among the owners holding as many links as it does. */
  inBucket: Node<Owner<T>> | undefined;
}

/**
 * Links in this process's memory, counted per owner (the credential behind them), because the
 * process-wide bound alone let one caller's burst of links push out another's before their time.
 * An owner past its own bound gives up its own oldest; a full store takes a link that is dead,
 * else the oldest of the owner holding the most, never one of an owner holding as few as the
 * caller asking. An equal value asked for again (aliases, a page reloaded) is handed the link it
 * has while that link has half its life ahead: at most two live links per owner and value.
 * Every step is O(1) (amortised for the dead, each forgotten once).
 */
/** The bounds with their defaults, refused by name when they make no sense. */
export function downloadBounds<T>({ maxEntries = 10_000, maxEntriesPerOwner = 1000, ownerOf = credentialOf }: DownloadBounds<T>): Required<DownloadBounds<T>> {
  for (const [name, bound] of [['maxEntries', maxEntries], ['maxEntriesPerOwner', maxEntriesPerOwner]] as const) {
    if (!Number.isInteger(bound) || bound < 1) throw new RangeError(`${name} must be a positive integer; got ${bound}`);
  }
  if (maxEntriesPerOwner > maxEntries) throw new RangeError(`maxEntriesPerOwner must be at most maxEntries (${maxEntries}); got ${maxEntriesPerOwner}`);
  return { maxEntries, maxEntriesPerOwner, ownerOf };
}

export function createDownloadStore<T>({ ttlMs, now = Date.now, ...bounds }: DownloadStoreOptions<T>): DownloadStore<T> {
  const { maxEntries, maxEntriesPerOwner, ownerOf } = downloadBounds(bounds);
  // Under a key drawn here, so the digests of credentials held in memory cannot be tested against guesses.
  const secret = randomBytes(32);
  const digestOf = (value: unknown) => createHmac('sha256', secret).update(canonical(value)).digest('base64url');
  const links = new Map<string, Link<T>>();
  /** Every link in the order issued, which (one lifetime for all) is the order they expire in. */
  const order = new List<Link<T>>();
  /** The newest link of each value. */
  const latest = new Map<string, Link<T>>();
  const owners = new Map<string, Owner<T>>();
  /** Owners by how many links they hold, each size's first to reach it first. */
  const bySize: List<Owner<T>>[] = [];
  let largest = 0;

  // Sizes move by one, so `largest` steps down at most once per link given up.
  function resize(owner: Owner<T>, from: number, to: number) {
    if (owner.inBucket) bySize[from]!.remove(owner.inBucket);
    owner.inBucket = to > 0 ? (bySize[to] ??= new List()).push(owner) : undefined;
    if (to > largest) largest = to;
    while (largest > 0 && !bySize[largest]?.size) largest--;
  }

  function add(id: string, value: T, expiresAt: number, owner: Owner<T>, key: string) {
    if (owner.links.size === 0) owners.set(owner.digest, owner);
    // Its nodes point back at it, so they are set once it exists.
    const link = { id, value, expiresAt, owner, key } as Link<T>;
    link.inStore = order.push(link);
    link.inOwner = owner.links.push(link);
    links.set(id, link);
    latest.set(key, link);
    resize(owner, owner.links.size - 1, owner.links.size);
  }

  function remove(link: Link<T>) {
    const { owner } = link;
    links.delete(link.id);
    order.remove(link.inStore);
    owner.links.remove(link.inOwner);
    if (latest.get(link.key) === link) latest.delete(link.key);
    if (owner.links.size === 0) owners.delete(owner.digest);
    resize(owner, owner.links.size + 1, owner.links.size);
  }

  /** The link that makes room for one of `owner` in a full store. */
  function evictee(owner: Owner<T>, at: number): Link<T> {
    const first = order.first!.value;
    if (at > first.expiresAt) return first;
    if (owner.links.size >= largest) return owner.links.first!.value;
    return bySize[largest]!.first!.value.links.first!.value;
  }

  return {
    async issue(value) {
      const at = now();
      // An expired id answers `expired` for one more lifetime, then is forgotten.
      while (order.first && at > order.first.value.expiresAt + ttlMs) remove(order.first.value);
      const key = digestOf(value);
      const held = latest.get(key);
      // Not one nearly dead (a link handed out should work for most of the lifetime it promises),
      // nor one issued after `at` (the clock went back): it would outlive the lifetime promised.
      if (held && at < held.expiresAt - ttlMs / 2 && at >= held.expiresAt - ttlMs) return { id: held.id, expiresAt: held.expiresAt };
      const digest = digestOf(ownerOf(value));
      const owner = owners.get(digest) ?? { digest, links: new List<Link<T>>(), inBucket: undefined };
      if (owner.links.size >= maxEntriesPerOwner) remove(owner.links.first!.value);
      while (links.size >= maxEntries) remove(evictee(owner, at));
      const id = newDownloadId();
      add(id, value, at + ttlMs, owner, key);
      return { id, expiresAt: at + ttlMs };
    },
    async find(id) {
      const link = links.get(id);
      if (!link) return undefined;
      const at = now();
      if (at > link.expiresAt + ttlMs) return undefined;
      return at > link.expiresAt ? 'expired' : link.value;
    },
    async close() {
      links.clear();
      latest.clear();
      owners.clear();
      order.first = order.last = undefined;
      order.size = 0;
      bySize.length = 0;
      largest = 0;
    },
  };
}

/** The absolute link on the gateway's origin; relative when the subgraph was reached without the gateway. */
export function downloadUrl(gatewayOrigin: string | undefined, subgraph: string, id: string): string {
  return `${gatewayOrigin ?? ''}${DOWNLOADS_PATH}${encodeURIComponent(subgraph)}/${id}`;
}

function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/+$/, '') ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The last header value read and its origin. Every request through one gateway sends the same value:
 * parsing it into a URL each time was about 1 µs of every marketplace request.
 */
let lastOrigin: { text: string; origin: string | undefined } | undefined;

/** The gateway origin header's value when it is a bare http(s) origin, else undefined. */
export function gatewayOriginOf(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (lastOrigin?.text !== text) lastOrigin = { text, origin: originOf(text) };
  return lastOrigin.origin;
}

export interface DownloadFile {
  contentType: string;
  filename: string;
  body: Readable;
  contentLength?: string;
}

/** What a failure to open the file tells the client: a status that says whether trying again can help. */
function refusal(error: unknown): { status: number; message: string; headers?: Record<string, string> } {
  const extensions = error instanceof GraphQLError ? error.extensions : {};
  if (extensions.status === 404) return { status: 404, message: 'The file no longer exists upstream.' };
  // The owner's pacing (the link takes a slot of its owner's rate) or the service's own 429.
  if (extensions.code === ErrorCode.RateLimited) {
    const after = typeof extensions.retryAfterSeconds === 'number' && extensions.retryAfterSeconds > 0 ? extensions.retryAfterSeconds : 1;
    return { status: 429, message: 'The service allows no more downloads for this link’s owner right now. Try again shortly.', headers: { 'retry-after': String(after) } };
  }
  // The credential the link was issued with was revoked or lost its rights: no retry will fix it.
  if (extensions.code === ErrorCode.Unauthenticated || extensions.code === ErrorCode.Forbidden) {
    return { status: 403, message: 'The service no longer accepts the credential this link was issued with. Ask the graph for a new link with a current credential.' };
  }
  return { status: 502, message: 'The upstream service could not provide the file. Try again later.' };
}

/** What a link being opened now answers to a second reader of it in this process. */
const BUSY = { message: 'This link is being opened by another download right now. Try again in a moment.' };

/**
 * The subgraph's `GET /downloads/<id>` route: streams the file behind a live id, and answers an
 * expired or unknown id with 410 or 404 and a message a person can read. One link is opened once at
 * a time in this process (from the call upstream until its answer's headers, not while its body
 * streams): every open takes a slot of its owner's upstream rate, and anyone holding the link could
 * otherwise queue a burst of calls ahead of all the owner's own. A second open meanwhile is 429.
 */
export function downloadRoute<T>(store: DownloadStore<T>, open: (value: T) => Promise<DownloadFile>, logger: Logger): SubgraphRoute {
  /** Links whose file is being asked of the service now (paced, until its headers come). */
  const opening = new Set<string>();
  return {
    method: 'GET',
    path: `${DOWNLOADS_PATH}*`,
    async handler(_req, res, url) {
      const id = url.pathname.slice(DOWNLOADS_PATH.length);
      let value: T | 'expired' | undefined;
      try {
        value = DOWNLOAD_ID.test(id) ? await store.find(id) : undefined;
      } catch (error) {
        logger.warn({ error: (error as Error).message }, 'download link store unavailable');
        return sendJson(res, 503, { message: 'Download links cannot be read right now. Try again shortly.' }, { 'retry-after': '1' });
      }
      if (value === undefined) return sendJson(res, 404, { message: 'This download link does not exist. Ask the graph for a new one.' });
      if (value === 'expired') return sendJson(res, 410, { message: 'This download link has expired. Ask the graph for a new one.' });
      if (opening.has(id)) return sendJson(res, 429, BUSY, { 'retry-after': '1' });
      opening.add(id);
      let file: DownloadFile;
      try {
        file = await open(value);
      } catch (error) {
        const { status, message, headers } = refusal(error);
        logger.warn({ code: error instanceof GraphQLError ? error.extensions.code : 'unknown', status: error instanceof GraphQLError ? error.extensions.status : undefined, answered: status }, 'download failed upstream');
        return sendJson(res, status, { message }, headers);
      } finally {
        opening.delete(id);
      }
      res.writeHead(200, {
        'content-type': file.contentType,
        'content-disposition': `attachment; filename="${file.filename.replace(/[^\w.-]/g, '_')}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        ...(file.contentLength ? { 'content-length': file.contentLength } : {}),
      });
      try {
        await pipeline(file.body, res);
      } catch (error) {
        // Cut short: the client sees a truncated body (its length, or its chunked end, is missing).
        // A client that left is no fault; a service that stalled or broke off is worth a warning.
        if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') logger.debug('download left by its client');
        else logger.warn({ code: error instanceof GraphQLError ? error.extensions.code : 'unknown', reason: (error as Error).message }, 'download cut off upstream');
      }
    },
  };
}
