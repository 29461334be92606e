import type { IncomingHttpHeaders } from 'node:http';
import type { SubgraphAnswer } from './fetcher.ts';
import type { Principal } from './auth/principal.ts';
import type { CallLedger } from './demandControl.ts';
import type { ClientDeparture } from '../lib/http.ts';

/** What a subgraph answered, or how reaching it failed, before Apollo Server ran the request. */
export interface Prefetched {
  serviceName: string;
  outcome: { answer: SubgraphAnswer } | { error: unknown };
}

/** Request headers, or connectionParams read as headers: names in lower case. */
export type Headers = Record<string, string | string[] | undefined>;

/** One caller's request as every part of the gateway sees it. */
export interface GatewayContext {
  /** The caller's request headers; each subgraph call picks its own credential from them. */
  headers: IncomingHttpHeaders;
  /** The gateway's public origin, on which subgraphs build download links. */
  origin?: string | undefined;
  /** The one subgraph answer the pass-through fetched but left to Apollo to report. */
  prefetched?: Prefetched;
  /** The caller, when the graph's own OAuth 2.0 is on and a token (or a trusted proxy) named one. */
  principal?: Principal | undefined;
  /** Aborted when the client goes away: subgraph requests still running are cut off. */
  signal?: AbortSignal | undefined;
  /**
   * The same departure as `signal`, for an HTTP request: subgraph requests are cut off through
   * it, so the signal (an AbortController) is made only where something else asks for it.
   */
  departure?: ClientDeparture | undefined;
  /** What is left of the operation's upstream call budget, set once its estimate was accepted. */
  calls?: CallLedger | undefined;
  /** The request's connection (its socket), for what is remembered per connection, such as its caller's key. */
  connection?: object | undefined;
}

/**
 * An HTTP request's context. A class, not a literal: a literal with a getter is built property by
 * property for every request, while an instance shares its getter and shape.
 */
export class HttpRequestContext implements GatewayContext {
  prefetched?: Prefetched;
  calls?: CallLedger | undefined;

  constructor(
    readonly headers: IncomingHttpHeaders,
    readonly origin: string | undefined,
    readonly principal: Principal | undefined,
    readonly connection: object,
    readonly departure: ClientDeparture | undefined,
  ) {}

  /** Made only when read: subgraph requests, shared or not, are cut off through `departure`. */
  get signal(): AbortSignal | undefined {
    return this.departure?.signal;
  }
}
