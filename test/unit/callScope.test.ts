import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { CALLS_MADE_HEADER, createCallScope, createRequestScope, scopedTransport } from '../../subgraphs/kit/callScope.ts';
import type { RestCall, RestTransport } from '../../subgraphs/kit/transport.ts';

/** Just what a request scope uses of a response: its close, whether it was written whole, its headers. */
function fakeResponse() {
  const res = Object.assign(new EventEmitter(), {
    writableFinished: false,
    headersSent: false,
    headers: {} as Record<string, string>,
    setHeader(name: string, value: string) {
      res.headers[name] = value;
    },
    writeHead() {
      res.headersSent = true;
      return res;
    },
  });
  return res;
}
const request = (headers: Record<string, string> = {}) => ({ headers }) as unknown as IncomingMessage;

describe('a request’s call scope', () => {
  it('is cancelled when the connection closes before the answer was written, and tells its watchers and any signal', () => {
    const res = fakeResponse();
    const scope = createRequestScope(request(), res as unknown as ServerResponse, 10);
    const early = scope.signal;
    const reasons: Error[] = [];
    scope.watch((reason) => reasons.push(reason));
    expect(scope.aborted).toBe(false);
    scope.take('recognition');
    res.emit('close');
    expect(scope.aborted).toBe(true);
    expect(reasons.map((reason) => reason.name)).toEqual(['AbortError']);
    expect(early.aborted).toBe(true);
    // A signal first asked for after the cancellation is aborted already, with the same reason.
    const other = fakeResponse();
    const quiet = createRequestScope(request(), other as unknown as ServerResponse, 10);
    other.emit('close');
    expect(quiet.signal.aborted).toBe(true);
    expect((quiet.signal.reason as Error).name).toBe('AbortError');
    expect(() => scope.take('recognition')).toThrow(/was not called: the request was cancelled/);
    const late: Error[] = [];
    scope.watch((reason) => late.push(reason));
    expect(late).toEqual(reasons);
  });

  it('is not cancelled by the close of an answer written whole, and reports its calls in a header', () => {
    const res = fakeResponse();
    const scope = createRequestScope(request({ 'x-upstream-call-budget': '2' }), res as unknown as ServerResponse, 10);
    expect(scope.budget).toBe(2);
    scope.take('recognition');
    (res as unknown as ServerResponse).writeHead(200);
    expect(res.headers[CALLS_MADE_HEADER]).toBe('1');
    res.writableFinished = true;
    res.emit('close');
    expect(scope.aborted).toBe(false);
    expect(scope.signal.aborted).toBe(false);
  });

  it('over a signal, is cancelled with it, and at once when it already was', () => {
    const controller = new AbortController();
    const scope = createCallScope({ budget: 5, signal: controller.signal });
    expect(scope.signal).toBe(controller.signal);
    controller.abort(new Error('gone'));
    expect(scope.aborted).toBe(true);
    const after = createCallScope({ budget: 5, signal: controller.signal });
    expect(after.aborted).toBe(true);
    const reasons: string[] = [];
    after.watch((reason) => reasons.push(reason.message));
    expect(reasons).toEqual(['gone']);
  });

  it('is put on every call of a scoped transport: a call that has it already goes as it is, any other as a copy with it', async () => {
    const sent: RestCall[] = [];
    const record = async (call: RestCall) => {
      sent.push(call);
      return { status: 200, headers: {}, body: undefined, text: '' };
    };
    const inner: RestTransport = { service: 'recognition', request: record, lookup: record, stream: () => Promise.reject(new Error('unused')), close: async () => {} };
    const scope = createCallScope({ budget: 5, signal: new AbortController().signal });
    const other = createCallScope({ budget: 5, signal: new AbortController().signal });
    const transport = scopedTransport(inner, scope);
    const own: RestCall = { operation: 'own', method: 'GET', path: '/a', scope };
    const bare: RestCall = { operation: 'bare', method: 'GET', path: '/b' };
    const foreign: RestCall = { operation: 'foreign', method: 'GET', path: '/c', scope: other };
    await transport.request(own);
    await transport.lookup(bare);
    await transport.request(foreign);
    expect(sent[0]).toBe(own);
    expect(sent.slice(1).map((call) => call.scope)).toEqual([scope, scope]);
    // The caller's objects are not changed: a call kept for later never carries a request's scope.
    expect(bare.scope).toBeUndefined();
    expect(foreign.scope).toBe(other);
  });
});
