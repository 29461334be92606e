import { describe, expect, it } from 'vitest';
import { asksForMultipartSubscription } from '../../gateway/subscriptions/multipart.ts';
import { prefersEventStream, refusalType } from '../../gateway/subscriptions/streamedRequests.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE = 'application/graphql-response+json; charset=utf-8';

describe('prefersEventStream', () => {
  it('is true only when text/event-stream is named, acceptable and ranked above both JSON types', () => {
    for (const accept of ['text/event-stream', 'TEXT/Event-Stream', 'text/event-stream, multipart/mixed', 'text/event-stream, application/json', 'application/json;q=0.9, text/event-stream', 'application/*, text/event-stream']) {
      expect(prefersEventStream(accept), accept).toBe(true);
    }
    for (const accept of [
      undefined,
      '',
      '*/*',
      'text/*',
      'application/json, text/event-stream',
      'application/json, text/event-stream;q=0',
      'text/event-stream;q=0',
      'text/event-stream;q=0, */*',
      'text/event-stream;q=0.5, application/json',
      'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
    ]) {
      expect(prefersEventStream(accept), String(accept)).toBe(false);
    }
  });

  it('does not negotiate an Accept longer than a client sends, so a hostile one costs no CPU before the rate limits', () => {
    // Both would prefer an event stream if they were read: refused by their length alone.
    for (const accept of ['text/event-stream,'.repeat(900), `a/b,${'a/b,'.repeat(4000)}text/event-stream`]) expect(prefersEventStream(accept)).toBe(false);
  });
});

describe('refusalType', () => {
  it('is application/graphql-response+json when the client prefers it, as Apollo Server negotiates a result; else application/json', () => {
    expect(refusalType('multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9')).toBe(GRAPHQL_RESPONSE);
    expect(refusalType('application/graphql-response+json')).toBe(GRAPHQL_RESPONSE);
    for (const accept of [undefined, '*/*', 'text/event-stream', 'multipart/mixed;subscriptionSpec="1.0", application/json', 'application/json, application/graphql-response+json', 'application/graphql-response+json;q=0.5, application/json', `${'x/y,'.repeat(300)}application/graphql-response+json`]) {
      expect(refusalType(accept), String(accept)).toBe(JSON_TYPE);
    }
  });
});

describe('asksForMultipartSubscription and q', () => {
  it('ignores a subscriptionSpec range the client refuses with q=0 (or a q that is not a number)', () => {
    for (const accept of ['application/json, multipart/mixed;subscriptionSpec=1.0;q=0', 'multipart/mixed;subscriptionSpec="1.0"; q=0.000', 'multipart/mixed;subscriptionSpec=1.0;q=none, application/json']) {
      expect(asksForMultipartSubscription(accept), accept).toBe(false);
    }
    for (const accept of ['application/json, multipart/mixed;subscriptionSpec=1.0;q=0.1', 'multipart/mixed;subscriptionSpec=1.0;q=0, multipart/mixed;subscriptionSpec=1.0;q=1', 'multipart/mixed;subscriptionSpec=1.0;qs=0']) {
      expect(asksForMultipartSubscription(accept), accept).toBe(true);
    }
  });
});
