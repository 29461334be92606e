import { createHash } from 'node:crypto';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import type { SubgraphAnswer } from './fetcher.ts';
import { readKey } from './inFlight.ts';
import type { DropChannel, Drops } from './microCacheChannel.ts';

export interface MicroCacheOptions {
  /** Root field (`Query.rewardCatalog`) to how long a read of it is kept, in ms. */
  fields: ReadonlyMap<string, number>;
  /** Answers kept at once, over every subgraph. */
  maxEntries: number;
  /** Bytes of answers kept at once, over every subgraph; a larger answer is not kept. */
  maxBytes: number;
  /** @default Date.now */
  now?: () => number;
  /**
   * The other gateways on the same Redis (gateway/microCacheChannel.ts): a credential's mutation
   * through any of them drops what this one kept for it, and nothing is kept or answered while the
   * channel is not live. Undefined: this gateway alone.
   */
  channel?: DropChannel | undefined;
}

export interface MicroCache {
  /**
   * How long a subgraph read may be kept: the shortest time to live of its root fields when every
   * one of them is opted in and the operation is a query; undefined otherwise.
   */
  ttlOf(query: string): number | undefined;
  /**
   * The key of a read: the subgraph, its credential hashed (what `drop` goes by), then the in-flight
   * key of the read (operation, variables, every header sent, so the credential) hashed.
   */
  keyOf(subgraph: string, credential: string, body: string, headers: Record<string, string>): string;
  /**
   * Resolves once this gateway has read every drop the channel took before the call: a read sent
   * after a write through another gateway was answered is then neither answered from what that
   * write made stale nor joined to a read that began before it. At once without a channel.
   */
  caughtUp(): Promise<void>;
  /** A kept answer still within its time to live; counts a hit or a miss. */
  get(key: string): SubgraphAnswer | undefined;
  /** Keeps a whole answer (2xx, no GraphQL errors) for `ttlMs`, evicting the oldest past the bounds. */
  set(key: string, answer: SubgraphAnswer, ttlMs: number): void;
  /** Forgets every answer kept for `credential` by `subgraph`: it sent a mutation, which they may predate. */
  drop(subgraph: string, credential: string): void;
  /**
   * Has every other gateway on the channel `drop` the same; resolves once the channel took it (at
   * once without one), never rejects. Called once the mutation is answered, before the answer goes back.
   */
  announce(subgraph: string, credential: string): Promise<void>;
  /**
   * `listener` learns which credentials (as `credentialDigest`) wrote to `subgraph` through another
   * gateway, or `undefined` for every credential, so that reads of theirs on their way are not kept.
   */
  watch(subgraph: string, listener: (digests: ReadonlySet<string> | undefined) => void): void;
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
  readonly bytes: number;
}

interface Entry {
  answer: SubgraphAnswer;
  expiresAt: number;
  size: number;
  /** Its subgraph and credential, as `groupOf` writes them; undefined for a key `keyOf` did not make. */
  group: string | undefined;
}

const hashed = (text: string) => createHash('sha256').update(text).digest('base64url');
/** A credential as the micro-cache holds it and the gateways name it to each other: never in the clear. */
export const credentialDigest = hashed;
const groupKey = (subgraph: string, digest: string) => `${subgraph}\u0000${digest}`;
/** What `keyOf` starts with for one subgraph and credential, hashed so no credential is held in the clear. */
const groupOf = (subgraph: string, credential: string) => groupKey(subgraph, hashed(credential));

/** Query texts the planner sends are few; their analysis is remembered, within this bound. */
const MAX_ANALYSED_QUERIES = 1000;

/** The root fields of a query, or undefined when it is not one plain query of plain fields. */
function rootFieldsOf(query: string): string[] | undefined {
  let document;
  try {
    document = parse(query, { noLocation: true });
  } catch {
    return undefined;
  }
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1 || operations[0]!.operation !== 'query') return undefined;
  const fields: string[] = [];
  for (const selection of operations[0]!.selectionSet.selections) {
    // A fragment at the root could hide any field: not worth reading through for a cache.
    if (selection.kind !== Kind.FIELD) return undefined;
    if (selection.name.value !== '__typename') fields.push(`Query.${selection.name.value}`);
  }
  return fields.length ? fields : undefined;
}

/** Whether a subgraph's answer is whole: 2xx and no GraphQL error, the only kind worth repeating. */
function isWhole(answer: SubgraphAnswer): boolean {
  if (answer.status < 200 || answer.status >= 300) return false;
  try {
    const body = JSON.parse(answer.bytes.toString('utf8')) as { errors?: unknown } | null;
    return body !== null && typeof body === 'object' && body.errors === undefined;
  } catch {
    return false;
  }
}

/**
 * A short cache of subgraph reads for the root fields an operator opted in, off unless some are:
 * dashboards asking the same leaderboard one after another share an answer for a second or two.
 * Keyed as identical reads in flight are (gateway/inFlight.ts), so never across two credentials;
 * only queries whose every root field is opted in, never a mutation, never an answer with errors.
 * A credential's mutation to a subgraph drops what that credential was kept of it (`drop`), on
 * every gateway of the `channel` when there is one (`announce`).
 * Bounded in entries and bytes; the oldest entry goes first.
 */
export function createMicroCache({ fields, maxEntries, maxBytes, now = Date.now, channel }: MicroCacheOptions): MicroCache {
  const entries = new Map<string, Entry>();
  // A mutation drops its credential's entries from here without going over every entry.
  const groups = new Map<string, Set<string>>();
  const analysed = new Map<string, number | undefined>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    bytes -= entry.size;
    if (entry.group === undefined) return;
    const keys = groups.get(entry.group);
    keys?.delete(key);
    if (keys?.size === 0) groups.delete(entry.group);
  };
  const dropGroup = (group: string) => {
    const keys = groups.get(group);
    if (!keys) return;
    for (const key of [...keys]) remove(key, entries.get(key)!);
  };
  // Few: one per subgraph data source.
  const watchers = new Map<string, ((digests: ReadonlySet<string> | undefined) => void)[]>();
  /** Another gateway's drops, or everything when the channel went down or came back. */
  const dropped = (drops: Drops) => {
    if (drops === 'all') {
      entries.clear();
      groups.clear();
      bytes = 0;
      for (const listeners of watchers.values()) for (const listener of listeners) listener(undefined);
      return;
    }
    const bySubgraph = new Map<string, Set<string>>();
    for (const { subgraph, digest } of drops) {
      dropGroup(groupKey(subgraph, digest));
      const digests = bySubgraph.get(subgraph);
      if (digests) digests.add(digest);
      else bySubgraph.set(subgraph, new Set([digest]));
    }
    for (const [subgraph, digests] of bySubgraph) for (const listener of watchers.get(subgraph) ?? []) listener(digests);
  };
  channel?.listen(dropped);
  /** Whether what is kept can be trusted: alone, always; with other gateways, only while told of their writes. */
  const trusted = () => channel === undefined || channel.live;

  return {
    ttlOf(query) {
      if (analysed.has(query)) return analysed.get(query);
      const roots = rootFieldsOf(query);
      const ttls = roots?.map((field) => fields.get(field));
      const ttl = ttls && ttls.every((value) => value !== undefined) ? Math.min(...(ttls as number[])) : undefined;
      if (analysed.size >= MAX_ANALYSED_QUERIES) analysed.clear();
      analysed.set(query, ttl);
      return ttl;
    },
    keyOf(subgraph, credential, body, headers) {
      return `${groupOf(subgraph, credential)}\u0000${hashed(readKey(body, headers))}`;
    },
    caughtUp() {
      return channel ? channel.caughtUp() : Promise.resolve();
    },
    get(key) {
      if (!trusted()) {
        misses += 1;
        return undefined;
      }
      const entry = entries.get(key);
      if (entry && entry.expiresAt > now()) {
        hits += 1;
        return entry.answer;
      }
      if (entry) remove(key, entry);
      misses += 1;
      return undefined;
    },
    set(key, answer, ttlMs) {
      const size = answer.bytes.length + key.length;
      if (size > maxBytes || !trusted() || !isWhole(answer)) return;
      const previous = entries.get(key);
      if (previous) remove(key, previous);
      // Map order is insertion order: the first entries are the oldest.
      for (const [oldKey, oldEntry] of entries) {
        if (entries.size < maxEntries && bytes + size <= maxBytes) break;
        remove(oldKey, oldEntry);
      }
      // The key's last part is the read's hash; what comes before it, its subgraph and credential.
      const separator = key.lastIndexOf('\u0000');
      const group = separator > 0 ? key.slice(0, separator) : undefined;
      if (group !== undefined) {
        const keys = groups.get(group);
        if (keys) keys.add(key);
        else groups.set(group, new Set([key]));
      }
      entries.set(key, { answer, expiresAt: now() + ttlMs, size, group });
      bytes += size;
    },
    drop(subgraph, credential) {
      dropGroup(groupOf(subgraph, credential));
    },
    announce(subgraph, credential) {
      return channel ? channel.publish(subgraph, hashed(credential)) : Promise.resolve();
    },
    watch(subgraph, listener) {
      const listeners = watchers.get(subgraph);
      if (listeners) listeners.push(listener);
      else watchers.set(subgraph, [listener]);
    },
    get hits() {
      return hits;
    },
    get misses() {
      return misses;
    },
    get entries() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}
