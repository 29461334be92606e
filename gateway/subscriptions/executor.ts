import { createHash } from 'node:crypto';
import { GraphQLError, getOperationAST, getVariableValues, type DocumentNode, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { executeQueryPlan, type GraphQLDataSource } from '@apollo/gateway';
import type { Logger } from '../../lib/logger.ts';
import { apolloLogger } from '../../lib/logger.ts';
import { formatGraphError } from '../../lib/errorFormatting.ts';
import { ErrorCode, graphError } from '../../lib/errors.ts';
import { credentialHeadersFor, credentialKeyFor, requiredCredentialHeaders } from '../credentials.ts';
import type { Planner } from '../planner.ts';
import { RESUME_VARIABLE, type SubscriptionPlan } from './planning.ts';
import { createPushIterator, DEFAULT_SUBSCRIBER_QUEUED_BYTES, type PushIterator } from './pushIterator.ts';
import type { SharedPayloads } from './sharedPayloads.ts';
import { openUpstream, type Upstream } from './upstream.ts';
import type { DemandControl, Estimate } from '../demandControl.ts';
import { activeSpanContext, createEventSpans } from '../tracing.ts';
import { EVENT_TRACE_EXTENSION, spanContextOf } from '../../lib/tracing.ts';

type RequestContext = Parameters<typeof executeQueryPlan>[2];

export interface SubscriptionRequest {
  document: DocumentNode;
  operationName?: string | null;
  /** The client's variables, as sent. */
  variables?: Record<string, unknown> | null;
  /** The caller's headers (lower-case names); each subgraph sees only its own credential. */
  headers: Record<string, string | string[] | undefined>;
}

export interface SubscriptionExecutorOptions {
  planner: Planner;
  /** A subgraph's GraphQL URL by name. */
  subgraphUrl(name: string): string;
  /** The data sources of the gateway, for the entity fetches of each event. */
  dataSources: ReadonlyMap<string, GraphQLDataSource>;
  logger: Logger;
  /** The one formatError of the gateway. */
  format?: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** Bounds on what one credential holds open. */
  limits?: CredentialLimits;
  /** The upstream call budget of each event's execution, checked against the estimate when subscribing. */
  demand?: DemandControl;
  /** The largest message read from a subgraph's event stream. @default 64 MiB */
  maxEventBytes?: number;
  /**
   * Where the transports serialise each result once for all its subscribers: a result that has to
   * wait in a subscriber's queue is measured by those very bytes. @default none: such a result is
   * serialised once to be measured (remembered for the other subscribers it waits for)
   */
  payloads?: Pick<SharedPayloads, 'bytesOf'> | undefined;
}

export interface CredentialLimits {
  /** Subscriptions of one credential, over every connection and transport. @default 2000 */
  subscriptions: number;
  /** Distinct upstream streams of one credential (identical subscriptions share one). @default 50 */
  streams: number;
  /** Events queued for one subscriber that reads slower than they come (it is then ended with SUBSCRIBER_TOO_SLOW). @default 10000 */
  queuedEvents?: number;
  /** Bytes of serialised events queued for one such subscriber (past it, ended the same way). @default 8 MiB */
  queuedBytes?: number;
}

export interface SubscriptionStats {
  /** Streams open upstream: one per distinct (operation, variables, credential), and one per subscription still catching up from its `after`. */
  upstreams: number;
  subscribers: number;
  /** Query plans run for events since start: one per event per upstream stream. */
  executions: number;
}

export interface SubscriptionExecutor {
  planner: Planner;
  subscribe(request: SubscriptionRequest): Promise<PushIterator<FormattedExecutionResult> | FormattedExecutionResult>;
  stats(): SubscriptionStats;
  close(): void;
}

interface Group {
  /** What identical subscriptions share: the planned operation, the variables but a client's own `after`, the credentials. */
  stream: string;
  subscribers: Set<PushIterator<FormattedExecutionResult>>;
  upstream: Upstream;
  /** Whose stream this is: the hash of the owning service's credential. */
  holder: string;
  /** Opened at the live edge (no client `after`), or merged with one that was: a subscriber without `after` may join it. */
  live: boolean;
  /** The cursor it opened after, while `recent` still holds every result since. */
  start: string | undefined;
  /** Its last results, oldest first, with their events' cursors: what a subscriber resuming from one of them missed. */
  recent: { cursor: string | undefined; result: FormattedExecutionResult }[];
  closed: boolean;
}

/**
 * Results a stream keeps for subscribers that resume from a cursor it delivered lately: a client
 * reconnecting after a blip joins the stream it left with what it missed, rather than holding a
 * stream of its own. References to results already pushed, never copies.
 */
const RECENT_RESULTS = 64;

interface Holdings {
  subscriptions: number;
  streams: number;
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableStringify((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The bytes a result takes queued: its serialised size, what a stalled subscriber's memory grows by
 * with it (the result objects themselves are the group's, shared). Asked only of results that wait.
 */
function resultSizes(payloads: Pick<SharedPayloads, 'bytesOf'> | undefined): (result: FormattedExecutionResult) => number {
  if (payloads) return (result) => payloads.bytesOf(result).length;
  const sizes = new WeakMap<object, number>();
  return (result) => {
    let size = sizes.get(result);
    if (size === undefined) sizes.set(result, (size = Buffer.byteLength(JSON.stringify(result))));
    return size;
  };
}

/**
 * Federated subscriptions, transport-free: plans the operation, opens the primary on the owning
 * subgraph, and for each event runs the rest of the plan (entity fetches to other subgraphs).
 * Identical (operation, variables, credential) subscriptions share one upstream stream and one
 * execution per event; a dropped stream resumes from its last cursor. A client's own `after` is not
 * part of what is shared: a subscription resuming from it joins a stream that delivered that cursor
 * lately (and is sent what followed), or else catches up on a stream of its own, which merges into
 * its peer once both delivered the same event (docs/EVENTS.md §5, "Resuming into a group").
 */
export function createSubscriptionExecutor({ planner, subgraphUrl, dataSources, logger, demand, format = formatGraphError(logger), limits = { subscriptions: 2000, streams: 50 }, maxEventBytes, payloads }: SubscriptionExecutorOptions): SubscriptionExecutor {
  /** The open groups of each stream identity: one live group, and any still catching up from a client's `after`. */
  const streams = new Map<string, Set<Group>>();
  /** The group each subscriber is in now (it moves when its group merges into another). */
  const memberships = new WeakMap<PushIterator<FormattedExecutionResult>, Group>();
  const capacity = limits.queuedEvents ?? 10_000;
  const queuedBytes = { max: limits.queuedBytes ?? DEFAULT_SUBSCRIBER_QUEUED_BYTES, sizeOf: resultSizes(payloads) };
  /** What each credential holds open, by credential hash; an entry goes when it holds nothing. */
  const holdings = new Map<string, Holdings>();
  const holdingsOf = (holder: string) => holdings.get(holder) ?? { subscriptions: 0, streams: 0 };
  const adjust = (holder: string, change: Partial<Holdings>) => {
    const current = holdingsOf(holder);
    const next = { subscriptions: current.subscriptions + (change.subscriptions ?? 0), streams: current.streams + (change.streams ?? 0) };
    if (next.subscriptions <= 0 && next.streams <= 0) holdings.delete(holder);
    else holdings.set(holder, next);
  };
  /** Forgets a group once, whichever of its ends comes first. */
  const dropGroup = (group: Group) => {
    if (group.closed) return;
    group.closed = true;
    const peers = streams.get(group.stream);
    peers?.delete(group);
    if (peers?.size === 0) streams.delete(group.stream);
    adjust(group.holder, { streams: -1 });
  };
  const attach = (group: Group, subscriber: PushIterator<FormattedExecutionResult>) => {
    group.subscribers.add(subscriber);
    memberships.set(subscriber, group);
  };
  /** Whether a queue takes `results` in bytes: as the queue admits them, the first whatever its size. */
  const fitsQueue = (results: readonly FormattedExecutionResult[]) => {
    let total = 0;
    for (const [index, result] of results.entries()) {
      total += queuedBytes.sizeOf(result);
      if (index > 0 && total > queuedBytes.max) return false;
    }
    return true;
  };
  /**
   * What a subscriber that has had every event up to `cursor` must be sent to join `group` with
   * nothing lost or repeated; undefined when the group cannot tell (it never delivered `cursor`, or
   * no longer holds what followed), or when it is more than the subscriber's queue takes, in events
   * or in bytes (it would be ended on joining, and again each time it resumed from that cursor).
   */
  const missedSince = (group: Group, cursor: string): FormattedExecutionResult[] | undefined => {
    let missed: FormattedExecutionResult[] | undefined;
    if (group.start === cursor) missed = group.recent.map((delivered) => delivered.result);
    else {
      const index = group.recent.findLastIndex((delivered) => delivered.cursor === cursor);
      if (index !== -1) missed = group.recent.slice(index + 1).map((delivered) => delivered.result);
    }
    return missed && missed.length < capacity && fitsQueue(missed) ? missed : undefined;
  };
  /**
   * Once a group has delivered the event at `cursor`, any other group of its stream that delivered it
   * too follows the same log at the same place or further: the group's subscribers move there (with
   * what that one delivered since) and its upstream stream goes. A stream opened to catch up from a
   * client's `after` so costs its stream only until it meets the live one.
   */
  const mergeIntoPeer = (group: Group, cursor: string) => {
    for (const peer of streams.get(group.stream) ?? []) {
      if (peer === group) continue;
      const missed = missedSince(peer, cursor);
      if (!missed) continue;
      peer.live ||= group.live;
      dropGroup(group);
      group.upstream.close();
      for (const subscriber of [...group.subscribers]) {
        group.subscribers.delete(subscriber);
        // Attached first: a push that ends a subscriber already behind leaves the group it is in now.
        attach(peer, subscriber);
        for (const result of missed) subscriber.push(result);
      }
      return;
    }
  };
  const formatAll = (errors: readonly GraphQLError[] | readonly GraphQLFormattedError[]): GraphQLFormattedError[] =>
    errors.map((error) => (error instanceof GraphQLError ? format(error.toJSON(), error) : error));
  const baseLogger = apolloLogger(logger);
  let executions = 0;
  const eventSpans = createEventSpans();

  function openGroup(stream: string, holder: string, plan: SubscriptionPlan, variables: Record<string, unknown>, headers: SubscriptionRequest['headers'], estimate: Estimate | undefined, operationName: string | undefined, after: string | undefined): Group {
    const subscribers = new Set<PushIterator<FormattedExecutionResult>>();
    // Set below, before any event can come.
    let self!: Group;
    let lastCursor = after;
    // The cursor of the last event the subgraph sent, executed or not: a stream that drops while
    // received events wait their turn resumes after them (from `lastCursor` it would be sent them again).
    let receivedCursor = after;
    const cursorOf = (event: ExecutionResult): string | undefined => {
      const root = event.data?.[plan.rootField] as Record<string, unknown> | null | undefined;
      const cursor = plan.cursorAlias && root ? root[plan.cursorAlias] : undefined;
      return typeof cursor === 'string' ? cursor : undefined;
    };
    // Events are executed one after another, so every subscriber sees them in upstream order.
    let tail = Promise.resolve();
    // Each event's trace links to the subscription that opened the group.
    const opener = eventSpans ? activeSpanContext() : undefined;
    const deliver = (result: FormattedExecutionResult, cursor: string | undefined) => {
      if (self.closed) return;
      for (const subscriber of subscribers) subscriber.push(result);
      // A push may end a subscriber too slow to keep up, and with the last one the group.
      if (!plan.resumable || self.closed) return;
      self.recent.push({ cursor, result });
      if (self.recent.length > RECENT_RESULTS) {
        self.recent.shift();
        self.start = undefined;
      }
      if (cursor !== undefined) mergeIntoPeer(self, cursor);
    };
    const broadcast = (result: FormattedExecutionResult) => deliver(result, undefined);
    const end = (errors?: readonly GraphQLFormattedError[]) => {
      dropGroup(self);
      for (const subscriber of [...subscribers]) {
        if (errors?.length) subscriber.push({ errors });
        subscriber.end();
      }
      subscribers.clear();
    };
    const requestContext = {
      request: { query: plan.text, variables, ...(plan.operationName ? { operationName: plan.operationName } : {}) },
      context: { headers },
      logger: baseLogger,
      metrics: {},
    } as unknown as RequestContext;

    function execute(event: ExecutionResult): Promise<void> {
      // Merged into another group: that one delivers this event.
      if (self.closed) return Promise.resolve();
      if (!eventSpans) return executeEvent(event, deliver);
      // The delivery that brought the event into the subgraph, when that subgraph traces too.
      const ingested = spanContextOf(event.extensions?.[EVENT_TRACE_EXTENSION]);
      return eventSpans(operationName, [opener, ingested], (done) =>
        executeEvent(event, (result, cursor) => {
          const count = subscribers.size;
          deliver(result, cursor);
          done({ subscribers: count, errorType: result.errors?.length ? String(result.errors[0]!.extensions?.code ?? 'INTERNAL_SERVER_ERROR') : undefined });
        }),
      );
    }

    async function executeEvent(event: ExecutionResult, deliver: (result: FormattedExecutionResult, cursor: string | undefined) => void): Promise<void> {
      if (!event.data) {
        if (event.errors?.length) deliver({ errors: formatAll(event.errors) }, undefined);
        return;
      }
      const cursor = cursorOf(event);
      if (cursor !== undefined) lastCursor = cursor;
      executions += 1;
      // The primary fetch is answered by the event itself; the rest of the plan runs as for a query.
      const eventSource: GraphQLDataSource = { process: async () => ({ data: event.data as Record<string, unknown> }) };
      const serviceMap = Object.fromEntries([...dataSources, [plan.primary.serviceName, eventSource]]);
      // Each event's execution has the operation's whole budget of upstream calls, no more.
      const context = { ...requestContext.context, ...(demand && estimate ? { calls: demand.ledger(estimate) } : {}) };
      const response = await executeQueryPlan(plan.queryPlan, serviceMap, { ...requestContext, context, request: { ...requestContext.request, variables: { ...variables, [RESUME_VARIABLE]: lastCursor } } } as RequestContext, plan.operationContext, planner.supergraphSchema, planner.apiSchema);
      const data = response.data as Record<string, unknown> | null | undefined;
      const shaped = data?.[plan.rootField] as Record<string, unknown> | null | undefined;
      if (shaped && plan.cursorAlias) delete shaped[plan.cursorAlias];
      const errors = [...(event.errors ?? []), ...(response.errors ?? [])];
      deliver({ ...(data !== undefined ? { data } : {}), ...(errors.length ? { errors: formatAll(errors as GraphQLError[]) } : {}) }, cursor);
    }

    const upstream = openUpstream({
      url: subgraphUrl(plan.primary.serviceName),
      ...(maxEventBytes ? { maxMessageBytes: maxEventBytes } : {}),
      service: plan.primary.serviceName,
      connectionParams: credentialHeadersFor(plan.primary.serviceName, headers),
      request: () => ({
        query: plan.primary.operation,
        ...(plan.primary.operationName ? { operationName: plan.primary.operationName } : {}),
        variables: Object.fromEntries(
          (plan.primary.variableUsages ?? []).map((name) => [name, name === RESUME_VARIABLE ? (receivedCursor ?? null) : variables[name]]),
        ),
      }),
      onResult: (result) => {
        receivedCursor = cursorOf(result) ?? receivedCursor;
        tail = tail.then(() => execute(result)).catch((error: unknown) => {
          logger.error({ err: { message: (error as Error).message } }, 'subscription event execution failed');
          broadcast({ errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
        });
      },
      onEnd: (errors) => {
        tail = tail.then(() => end(errors ? formatAll(errors) : undefined));
      },
      logger,
    });
    self = { stream, subscribers, upstream, holder, live: after === undefined, start: after, recent: [], closed: false };
    return self;
  }

  return {
    planner,
    async subscribe({ document, operationName, variables: rawVariables, headers }) {
      const plan = planner.plan(document, operationName ?? undefined);
      if (Array.isArray(plan)) return { errors: formatAll(plan) };
      const { primary, clientAfter } = plan as SubscriptionPlan;
      const variables = { ...(rawVariables ?? {}) };
      const operation = getOperationAST(document, operationName ?? undefined)!;
      const coerced = getVariableValues(planner.graphqlApiSchema, operation.variableDefinitions ?? [], variables);
      if (coerced.errors) return { errors: formatAll(coerced.errors.map((error) => new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { code: ErrorCode.BadUserInput } }))) };

      const checked = demand?.check(document, operation, variables);
      if (checked && 'error' in checked) return { errors: formatAll([checked.error]) };

      const needed = requiredCredentialHeaders(primary.serviceName);
      if (needed.length && !needed.some((name) => headers[name])) {
        return { errors: formatAll([graphError(`${primary.serviceName} needs a credential to subscribe: send ${needed.join(' or ')}`, { code: ErrorCode.Unauthenticated, service: primary.serviceName })]) };
      }

      const holder = createHash('sha256').update(stableStringify(credentialKeyFor(primary.serviceName, headers))).digest('hex');
      const held = holdingsOf(holder);
      if (held.subscriptions >= limits.subscriptions) {
        return { errors: formatAll([graphError(`this credential already holds ${limits.subscriptions} subscriptions, the most allowed (MAX_SUBSCRIPTIONS_PER_CREDENTIAL)`, { code: ErrorCode.RateLimited })]) };
      }

      // The client's `after` says where it starts, not what it follows: it is left out of what identical subscriptions share.
      const given = clientAfter ? ('literal' in clientAfter ? clientAfter.literal : coerced.coerced[clientAfter.variable]) : undefined;
      const after = typeof given === 'string' && given !== '' ? given : undefined;
      const shared = clientAfter && 'variable' in clientAfter && !clientAfter.alsoElsewhere ? Object.fromEntries(Object.entries(variables).filter(([name]) => name !== clientAfter.variable)) : variables;
      const credentials = [...new Set([...dataSources.keys(), primary.serviceName])].map((name) => stableStringify(credentialKeyFor(name, headers)));
      const stream = createHash('sha256')
        .update((plan as SubscriptionPlan).text)
        .update('\u0000')
        .update(operationName ?? '')
        .update('\u0000')
        .update(stableStringify(shared))
        .update('\u0000')
        .update(credentials.join('\u0000'))
        .digest('hex');
      // Without `after`, the live group; resuming, a group that can tell what came after its cursor.
      let group: Group | undefined;
      let missed: FormattedExecutionResult[] = [];
      for (const peer of streams.get(stream) ?? []) {
        const since = after === undefined ? (peer.live ? [] : undefined) : missedSince(peer, after);
        if (since) {
          [group, missed] = [peer, since];
          break;
        }
      }
      if (!group) {
        if (held.streams >= limits.streams) {
          const why = after === undefined ? 'identical subscriptions share one' : 'a subscription resuming from a cursor no open stream reaches holds one of its own until it has caught up';
          return { errors: formatAll([graphError(`this credential already holds ${limits.streams} distinct subscription streams, the most allowed (MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL); ${why}`, { code: ErrorCode.RateLimited })]) };
        }
        group = openGroup(stream, holder, plan as SubscriptionPlan, variables, headers, checked?.estimate, operationName ?? operation.name?.value, after);
        streams.set(stream, (streams.get(stream) ?? new Set()).add(group));
        adjust(holder, { streams: 1 });
      }
      const subscriber = createPushIterator<FormattedExecutionResult>({
        capacity,
        bytes: queuedBytes,
        onReturn: () => {
          adjust(holder, { subscriptions: -1 });
          const current = memberships.get(subscriber);
          memberships.delete(subscriber);
          if (!current) return;
          current.subscribers.delete(subscriber);
          if (current.subscribers.size === 0 && !current.closed) {
            dropGroup(current);
            current.upstream.close();
          }
        },
      });
      // Counted and attached before anything is pushed: a push that ended it would undo both.
      attach(group, subscriber);
      adjust(holder, { subscriptions: 1 });
      for (const result of missed) subscriber.push(result);
      return subscriber;
    },
    stats() {
      let upstreams = 0;
      let subscribers = 0;
      for (const groups of streams.values()) {
        upstreams += groups.size;
        for (const group of groups) subscribers += group.subscribers.size;
      }
      return { upstreams, subscribers, executions };
    },
    close() {
      for (const groups of [...streams.values()]) {
        for (const group of [...groups]) {
          dropGroup(group);
          group.upstream.close();
          for (const subscriber of [...group.subscribers]) subscriber.end();
        }
      }
    },
  };
}
