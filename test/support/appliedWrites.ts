import { expect } from 'vitest';
import type { GraphQLResult } from './stack.ts';

type GraphError = NonNullable<GraphQLResult['errors']>[number];

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A write the service applied whose resource could not be read: what `appliedButUnread` (subgraphs/kit/errors.ts) says. */
export interface AppliedButUnread {
  service: string;
  /** The words before the id: "the service created the product". */
  what: string;
  /** `resourceId`: the SKU or id the write named or answered. */
  id: string;
  /** The query the message tells the client to read it with: `product(sku: "X")`. */
  follow: string;
  path: (string | number)[];
  /** The read's own extensions, which the error keeps (`code`, `status`). */
  cause: Record<string, unknown>;
}

export function expectAppliedButUnread(error: GraphError | undefined, { service, what, id, follow, path, cause }: AppliedButUnread): void {
  expect(error?.path).toEqual(path);
  expect(error?.extensions).toMatchObject({ ...cause, service, writeOutcome: 'APPLIED', resourceId: id });
  expect(error?.message).toMatch(new RegExp(`^${literal(`${service}: ${what} ${id}, but reading it back failed (`)}.+\\)\\. Do not send the mutation again`));
  expect(error?.message).toContain(follow);
}
