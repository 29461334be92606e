import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { FetchNode } from '@apollo/query-planner';
import { createRepeatOperations } from '../lib/repeatOperations.ts';
import type { SubgraphAnswer } from './fetcher.ts';
import type { OperationMetrics } from './metricsPlugin.ts';
import type { DemandControl } from './demandControl.ts';
import type { AccessLog } from './accessLog.ts';
import type { SubgraphDataSource, SubgraphRequest } from './subgraphDataSource.ts';
import type { GatewayContext, Prefetched } from './context.ts';
import { createFetchSpans } from './tracing.ts';
import { DATA_ONLY_HEADER } from '../lib/dataOnlyAnswers.ts';

export type PassThroughOutcome = { served: true } | { served: false; prefetched?: Prefetched };

export interface PassThrough {
  /** Called for an operation Apollo has validated and planned as one fetch that needs no reshaping. */
  remember(query: string, operationName: string | null | undefined, fetch: FetchNode, operation: OperationDefinitionNode, document: DocumentNode): void;
  /**
   * Serves a repeat of a remembered operation when the subgraph's answer can go to the client as it
   * came. Otherwise nothing is written, and whatever was fetched is returned for Apollo to report.
   */
  serve(body: unknown, context: GatewayContext, accept: string | undefined, res: ServerResponse): Promise<PassThroughOutcome>;
}

export interface PassThroughOptions {
  /** The API schema, against which variables are checked. */
  schema: GraphQLSchema;
  dataSources: ReadonlyMap<string, SubgraphDataSource>;
  metrics: OperationMetrics;
  /** The same upstream call budget as Apollo Server's path applies. */
  demand: DemandControl;
  /** The same access log as Apollo Server's path writes. */
  accessLog?: AccessLog | undefined;
  /** Distinct operations remembered. @default 2000 */
  cacheSize?: number;
}

/** The subgraph request of a one-fetch plan: its operation, and the caller's variables it uses. */
export function subgraphRequestFor(fetch: FetchNode, provided: Record<string, unknown>): SubgraphRequest {
  const variables: Record<string, unknown> = {};
  for (const name of fetch.variableUsages ?? []) if (provided[name] !== undefined) variables[name] = provided[name];
  return { query: fetch.operation, variables, ...(fetch.operationName ? { operationName: fetch.operationName } : {}) };
}

const DATA_FIRST = Buffer.from('{"data":');
const EXTENSIONS_KEY = Buffer.from('"extensions":');
const CLOSING_BRACE = 0x7d;
const NEWLINE = 0x0a;

/**
 * Apollo Server serialises `errors` before `data`, so an answer that opens with `data` has none;
 * it ends its JSON with a newline, as the gateway's own answers do.
 * Subgraph extensions are not passed on to clients: an answer naming that key anywhere (an alias
 * may, harmlessly) goes through Apollo, unless the subgraph says it wrote nothing but `data`
 * (`DATA_ONLY_HEADER`). A cache hint would change Apollo's cache-control header.
 */
function passesAsItIs(answer: SubgraphAnswer): boolean {
  const { status, headers, bytes } = answer;
  return (
    status === 200 &&
    headers['cache-control'] === undefined &&
    bytes.length > DATA_FIRST.length &&
    bytes.subarray(0, DATA_FIRST.length).equals(DATA_FIRST) &&
    (bytes[bytes.length - 1] === CLOSING_BRACE || (bytes[bytes.length - 1] === NEWLINE && bytes[bytes.length - 2] === CLOSING_BRACE)) &&
    (headers[DATA_ONLY_HEADER] === '1' || bytes.indexOf(EXTENSIONS_KEY) === -1)
  );
}

/**
 * Repeat operations that one subgraph answers whole skip Apollo Server at the gateway.
 *
 * For such an operation (one REST service, one subgraph: the common case), Apollo Server would
 * hash and look up the document, run its plugins, call the subgraph, parse its answer and write the
 * same JSON back. Once Apollo has validated and planned an operation, its text is remembered; a
 * repeat has its variables checked as Apollo would, is sent to the subgraph, and an answer without
 * errors is written to the client byte for byte, with Apollo's own headers. Any other answer, or a
 * subgraph out of reach, is handed to Apollo as already fetched: errors are formatted in one place
 * and the subgraph is never called twice.
 */
export function createPassThrough({ schema, dataSources, metrics, demand, accessLog, cacheSize = 2000 }: PassThroughOptions): PassThrough {
  const repeats = createRepeatOperations<{ fetch: FetchNode; operation: OperationDefinitionNode; document: DocumentNode; source: SubgraphDataSource; documentHash: string }>(schema, cacheSize);
  const fetchSpan = createFetchSpans('pass-through');

  return {
    remember(query, operationName, fetch, operation, document) {
      const source = dataSources.get(fetch.serviceName);
      // Hashed once here, as Apollo names the document, so a repeat's access log line costs no hashing.
      const documentHash = createHash('sha256').update(query).digest('hex');
      if (source) repeats.remember(query, operationName, { fetch, operation, document, source, documentHash });
    },

    async serve(body, context, accept, res) {
      const started = performance.now();
      const repeat = repeats.recall(body, accept);
      if (!repeat) return { served: false };
      const prepared = repeat.value;
      const serviceName = prepared.fetch.serviceName;
      // Its variables may make a remembered operation too expensive: Apollo Server's path refuses it.
      const checked = demand.check(prepared.document, prepared.operation, repeat.variables);
      if ('error' in checked) return { served: false };
      context.calls = demand.ledger(checked.estimate);
      let answer: SubgraphAnswer;
      try {
        answer = await fetchSpan(serviceName, prepared.operation, () => prepared.source.send(subgraphRequestFor(prepared.fetch, repeat.variables), context));
      } catch (error) {
        return { served: false, prefetched: { serviceName, outcome: { error } } };
      }
      if (!passesAsItIs(answer)) return { served: false, prefetched: { serviceName, outcome: { answer } } };
      res.writeHead(200, { 'content-type': repeat.contentType, 'cache-control': 'no-store', 'content-length': answer.bytes.length });
      res.end(answer.bytes);
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(prepared.operation.operation, true, seconds, true);
      accessLog?.record(context, { type: prepared.operation.operation, operation: prepared.operation.name?.value, documentHash: prepared.documentHash, durationMs: seconds * 1000, status: 200, errorCodes: [], path: 'pass-through' });
      return { served: true };
    },
  };
}
