import { createHash } from 'node:crypto';
import { GraphQLError, getOperationAST, getVariableValues, type DocumentNode, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { executeQueryPlan, type GraphQLDataSource } from '@apollo/gateway';
import type { Logger } from '../../lib/logger.ts';
import { apolloLogger } from '../../lib/logger.ts';
import { formatGraphError } from '../../lib/errorFormatting.ts';
import { ErrorCode, graphError } from '../../lib/errors.ts';
import { credentialHeadersFor, credentialKeyFor, requiredCredentialHeaders } from '../credentials.ts';
import type { Planner } from '../planner.ts';
import { CURSOR_ALIAS, RESUME_VARIABLE, type SubscriptionPlan } from './planning.ts';
import { createPushIterator, type PushIterator } from './pushIterator.ts';
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
}

export interface CredentialLimits {
  /** Subscriptions of one credential, over every connection and transport. @default 2000 */
  subscriptions: number;
  /** Distinct upstream streams of one credential (identical subscriptions share one). @default 50 */
  streams: number;
  /** Events queued for one subscriber that reads slower than they come (it is then ended with SUBSCRIBER_TOO_SLOW). @default 10000 */
  queuedEvents?: number;
}

export interface SubscriptionStats {
  /** Distinct (operation, variables, credential) streams open upstream. */
  upstreams: number;
  subscribers: number;
  /** Query plans run for events since start: one per event per upstream stream. */
  executions: number;
}

export interface SubscriptionExecutor {
  planner: Planner;
  subscribe(request: SubscriptionRequest): Promise<AsyncIterableIterator<FormattedExecutionResult> | FormattedExecutionResult>;
  stats(): SubscriptionStats;
  close(): void;
}

interface Group {
  subscribers: Set<PushIterator<FormattedExecutionResult>>;
  upstream: Upstream;
  /** Whose stream this is: the hash of the owning service's credential. */
  holder: string;
}

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
 * Federated subscriptions, transport-free: plans the operation, opens the primary on the owning
 * subgraph, and for each event runs the rest of the plan (entity fetches to other subgraphs).
 * Identical (operation, variables, credential) subscriptions share one upstream stream and one
 * execution per event; a dropped stream resumes from its last cursor.
 */
export function createSubscriptionExecutor({ planner, subgraphUrl, dataSources, logger, demand, format = formatGraphError(logger), limits = { subscriptions: 2000, streams: 50 }, maxEventBytes }: SubscriptionExecutorOptions): SubscriptionExecutor {
  const groups = new Map<string, Group>();
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
  const dropGroup = (key: string, group: Group) => {
    if (groups.get(key) !== group) return;
    groups.delete(key);
    adjust(group.holder, { streams: -1 });
  };
  const formatAll = (errors: readonly GraphQLError[] | readonly GraphQLFormattedError[]): GraphQLFormattedError[] =>
    errors.map((error) => (error instanceof GraphQLError ? format(error.toJSON(), error) : error));
  const baseLogger = apolloLogger(logger);
  let executions = 0;
  const eventSpans = createEventSpans();

  function openGroup(key: string, holder: string, plan: SubscriptionPlan, variables: Record<string, unknown>, headers: SubscriptionRequest['headers'], estimate: Estimate | undefined, operationName: string | undefined): Group {
    const subscribers = new Set<PushIterator<FormattedExecutionResult>>();
    let self: Group | undefined;
    let lastCursor: string | undefined = plan.clientAfter ? (('literal' in plan.clientAfter ? plan.clientAfter.literal : variables[plan.clientAfter.variable]) as string | undefined) : undefined;
    // Events are executed one after another, so every subscriber sees them in upstream order.
    let tail = Promise.resolve();
    // Each event's trace links to the subscription that opened the group.
    const opener = eventSpans ? activeSpanContext() : undefined;
    const broadcast = (result: FormattedExecutionResult) => {
      for (const subscriber of subscribers) subscriber.push(result);
    };
    const end = (errors?: readonly GraphQLFormattedError[]) => {
      if (self) dropGroup(key, self);
      for (const subscriber of subscribers) {
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
      if (!eventSpans) return executeEvent(event, broadcast);
      // The delivery that brought the event into the subgraph, when that subgraph traces too.
      const ingested = spanContextOf(event.extensions?.[EVENT_TRACE_EXTENSION]);
      return eventSpans(operationName, [opener, ingested], (done) =>
        executeEvent(event, (result) => {
          broadcast(result);
          done({ subscribers: subscribers.size, errorType: result.errors?.length ? String(result.errors[0]!.extensions?.code ?? 'INTERNAL_SERVER_ERROR') : undefined });
        }),
      );
    }

    async function executeEvent(event: ExecutionResult, broadcast: (result: FormattedExecutionResult) => void): Promise<void> {
      if (!event.data) {
        if (event.errors?.length) broadcast({ errors: formatAll(event.errors) });
        return;
      }
      const root = event.data[plan.rootField] as Record<string, unknown> | null | undefined;
      if (root && typeof root[CURSOR_ALIAS] === 'string') lastCursor = root[CURSOR_ALIAS];
      executions += 1;
      // The primary fetch is answered by the event itself; the rest of the plan runs as for a query.
      const eventSource: GraphQLDataSource = { process: async () => ({ data: event.data as Record<string, unknown> }) };
      const serviceMap = Object.fromEntries([...dataSources, [plan.primary.serviceName, eventSource]]);
      // Each event's execution has the operation's whole budget of upstream calls, no more.
      const context = { ...requestContext.context, ...(demand && estimate ? { calls: demand.ledger(estimate) } : {}) };
      const response = await executeQueryPlan(plan.queryPlan, serviceMap, { ...requestContext, context, request: { ...requestContext.request, variables: { ...variables, [RESUME_VARIABLE]: lastCursor } } } as RequestContext, plan.operationContext, planner.supergraphSchema, planner.apiSchema);
      const data = response.data as Record<string, unknown> | null | undefined;
      const shaped = data?.[plan.rootField] as Record<string, unknown> | null | undefined;
      if (shaped) delete shaped[CURSOR_ALIAS];
      const errors = [...(event.errors ?? []), ...(response.errors ?? [])];
      broadcast({ ...(data !== undefined ? { data } : {}), ...(errors.length ? { errors: formatAll(errors as GraphQLError[]) } : {}) });
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
          (plan.primary.variableUsages ?? []).map((name) => [name, name === RESUME_VARIABLE ? (lastCursor ?? null) : variables[name]]),
        ),
      }),
      onResult: (result) => {
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
    self = { subscribers, upstream, holder };
    return self;
  }

  return {
    planner,
    async subscribe({ document, operationName, variables: rawVariables, headers }) {
      const plan = planner.plan(document, operationName ?? undefined);
      if (Array.isArray(plan)) return { errors: formatAll(plan) };
      const { primary } = plan as SubscriptionPlan;
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

      const credentials = [...new Set([...dataSources.keys(), primary.serviceName])].map((name) => stableStringify(credentialKeyFor(name, headers)));
      const key = createHash('sha256')
        .update((plan as SubscriptionPlan).text)
        .update('\u0000')
        .update(operationName ?? '')
        .update('\u0000')
        .update(stableStringify(variables))
        .update('\u0000')
        .update(credentials.join('\u0000'))
        .digest('hex');
      let group = groups.get(key);
      if (!group) {
        if (held.streams >= limits.streams) {
          return { errors: formatAll([graphError(`this credential already holds ${limits.streams} distinct subscription streams, the most allowed (MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL); identical subscriptions share one`, { code: ErrorCode.RateLimited })]) };
        }
        group = openGroup(key, holder, plan as SubscriptionPlan, variables, headers, checked?.estimate, operationName ?? operation.name?.value);
        groups.set(key, group);
        adjust(holder, { streams: 1 });
      }
      const joined = group;
      const subscriber = createPushIterator<FormattedExecutionResult>({
        capacity: limits.queuedEvents,
        onReturn: () => {
          adjust(holder, { subscriptions: -1 });
          joined.subscribers.delete(subscriber);
          if (joined.subscribers.size === 0 && groups.get(key) === joined) {
            dropGroup(key, joined);
            joined.upstream.close();
          }
        },
      });
      joined.subscribers.add(subscriber);
      adjust(holder, { subscriptions: 1 });
      return subscriber;
    },
    stats() {
      let subscribers = 0;
      for (const group of groups.values()) subscribers += group.subscribers.size;
      return { upstreams: groups.size, subscribers, executions };
    },
    close() {
      for (const [key, group] of [...groups]) {
        dropGroup(key, group);
        group.upstream.close();
        for (const subscriber of group.subscribers) subscriber.end();
      }
    },
  };
}
