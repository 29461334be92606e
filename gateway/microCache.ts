import { createHash } from 'node:crypto';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import type { SubgraphAnswer } from './fetcher.ts';
import { readKey } from './inFlight.ts';

export interface MicroCacheOptions {
  /** Root field (`Query.rewardCatalog`) to how long a read of it is kept, in ms. */
  fields: ReadonlyMap<string, number>;
  /** Answers kept at once, over every subgraph. */
  maxEntries: number;
  /** Bytes of answers kept at once, over every subgraph; a larger answer is not kept. */
  maxBytes: number;
  /** @default Date.now */
  now?: () => number;
}

export interface MicroCache {
  /**
   * How long a subgraph read may be kept: the shortest time to live of its root fields when every
   * one of them is opted in and the operation is a query; undefined otherwise.
   */
  ttlOf(query: string): number | undefined;
  /** The key of a read: the subgraph, then the in-flight key of the read (operation, variables, every header sent, so the credential) hashed. */
  keyOf(subgraph: string, body: string, headers: Record<string, string>): string;
  /** A kept answer still within its time to live; counts a hit or a miss. */
  get(key: string): SubgraphAnswer | undefined;
  /** Keeps a whole answer (2xx, no GraphQL errors) for `ttlMs`, evicting the oldest past the bounds. */
  set(key: string, answer: SubgraphAnswer, ttlMs: number): void;
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
  readonly bytes: number;
}

interface Entry {
  answer: SubgraphAnswer;
  expiresAt: number;
  size: number;
}

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
 * Bounded in entries and bytes; the oldest entry goes first.
 */
export function createMicroCache({ fields, maxEntries, maxBytes, now = Date.now }: MicroCacheOptions): MicroCache {
  const entries = new Map<string, Entry>();
  const analysed = new Map<string, number | undefined>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    bytes -= entry.size;
  };

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
    keyOf(subgraph, body, headers) {
      return `${subgraph}\u0000${createHash('sha256').update(readKey(body, headers)).digest('base64url')}`;
    },
    get(key) {
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
      if (size > maxBytes || !isWhole(answer)) return;
      const previous = entries.get(key);
      if (previous) remove(key, previous);
      // Map order is insertion order: the first entries are the oldest.
      for (const [oldKey, oldEntry] of entries) {
        if (entries.size < maxEntries && bytes + size <= maxBytes) break;
        remove(oldKey, oldEntry);
      }
      entries.set(key, { answer, expiresAt: now() + ttlMs, size });
      bytes += size;
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
