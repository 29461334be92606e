import type { DocumentStore } from '@apollo/server';
import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import { createBoundedCache } from './boundedCache.ts';

/**
 * What V8 keeps for each lexical token of a parsed document: the token, the Location of the node it
 * starts and that node (330 to 390 bytes measured, on operations from 10 to 1,900 tokens).
 */
const BYTES_PER_TOKEN = 400;
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * The bytes a parsed document holds. Its `loc` keeps the whole source text, comments and padding
 * included, and every token; Apollo Server's default store counts `JSON.stringify(document)`, which
 * has neither (a text of 1 MiB that is all comment counts 413 bytes, so 30 MiB of them is 76,000).
 */
export function documentBytes(document: DocumentNode | OperationDefinitionNode): number {
  const { loc } = document;
  if (!loc) return Buffer.byteLength(JSON.stringify(document));
  let tokens = 0;
  // The whole source's tokens: a node's `loc` keeps the source and the token list it was parsed from.
  let first = loc.startToken;
  while (first.prev) first = first.prev;
  for (let token: typeof first | null = first; token; token = token.next) tokens += 1;
  const { body } = loc.source;
  // V8 keeps a string two bytes a character once one character is beyond Latin-1.
  return body.length * (BEYOND_LATIN1.test(body) ? 2 : 1) + tokens * BYTES_PER_TOKEN;
}

export interface DocumentStoreBounds {
  maxEntries: number;
  maxBytes: number;
}

/** Apollo Server's store of validated documents, bounded in entries and in the bytes they hold. */
export function createDocumentStore({ maxEntries, maxBytes }: DocumentStoreBounds): DocumentStore & { readonly size: number; readonly bytes: number } {
  const documents = createBoundedCache<DocumentNode>(maxEntries, { maxBytes, sizeOf: (key, document) => key.length + documentBytes(document) });
  return {
    get: async (key) => documents.get(key),
    set: async (key, document) => documents.set(key, document),
    // Apollo Server never deletes from its document store; an entry goes when newer ones need room.
    delete: async () => false,
    get size() {
      return documents.size;
    },
    get bytes() {
      return documents.bytes;
    },
  };
}
