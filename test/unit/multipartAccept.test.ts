import { describe, expect, it } from 'vitest';
import { asksForMultipartSubscription } from '../../gateway/subscriptions/multipart.ts';

describe('asksForMultipartSubscription', () => {
  it('finds a multipart/mixed range with subscriptionSpec, in any case and position, and nothing else', () => {
    for (const accept of [
      'multipart/mixed;subscriptionSpec=1.0, application/json',
      'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json',
      'application/json, MULTIPART/MIXED; SUBSCRIPTIONSPEC="1.0"',
      'multipart/mixed;deferSpec=20220824, multipart/mixed;subscriptionSpec="1.0", application/json',
    ]) {
      expect(asksForMultipartSubscription(accept), accept).toBe(true);
    }
    for (const accept of ['application/json', 'text/event-stream', 'multipart/mixed;deferSpec=20220824, application/json', 'multipart/mixed, application/json;subscriptionSpec=1.0', 'subscriptionSpec', '']) {
      expect(asksForMultipartSubscription(accept), accept).toBe(false);
    }
  });

  it('reads a header as long as Node accepts, built to make a pattern backtrack, with the right answer', () => {
    expect(asksForMultipartSubscription('multipart/mixed'.repeat(1090))).toBe(false);
    expect(asksForMultipartSubscription(`${'multipart/mixed;'.repeat(1000)}subscriptionSpec`)).toBe(true);
    expect(asksForMultipartSubscription('multipart/mixed, subscriptionspec '.repeat(480))).toBe(false);
  });
});
