import {
  GraphQLError,
  Kind,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isObjectType,
  parse,
  print,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { ApolloGateway } from '@apollo/gateway';
import { wrapExecutor, type Executor, type GatewayInterface } from './wrapExecutor.ts';
import type { FetchNode } from '@apollo/query-planner';
import { operationFromDocument } from '@apollo/federation-internals';
import type { Planner } from './planner.ts';
import { createBoundedCache } from '../lib/boundedCache.ts';
import { subgraphRequestFor, type PassThrough } from './passThrough.ts';
import type { GatewayContext } from './context.ts';
import type { SubgraphDataSource } from './subgraphDataSource.ts';
import { failedDirectFetch } from './failedFetch.ts';
import { createFetchSpans } from './tracing.ts';

type RequestContext = Parameters<Executor>[0];
type ExecutionResult = Awaited<ReturnType<Executor>>;

/** A response key, the field it reads, its arguments as written, and what it selects below. */
type ShapeEntry = [key: string, field: string, args: string, below: Shape | null];
type Shape = ShapeEntry[];

/**
 * Adds an entry to a selection set's shape; false when the gateway itself would have to merge it.
 * The same leaf selected twice is one key, placed where it first appears: Apollo Client adds
 * `__typename` to each fragment as well as to the selection set that spreads it.
 */
function addEntry(shape: Shape, keys: Map<string, ShapeEntry>, entry: ShapeEntry): boolean {
  const seen = keys.get(entry[0]);
  if (seen) return seen[1] === entry[1] && seen[2] === entry[2] && seen[3] === null && entry[3] === null;
  keys.set(entry[0], entry);
  shape.push(entry);
  return true;
}

/**
 * The response shape a selection set asks for, or undefined when it holds anything whose result
 * the gateway itself must shape: directives, type conditions, abstract types, introspection,
 * a response key selected twice (but for one leaf repeated).
 */
function shapeOf(selectionSet: SelectionSetNode, type: GraphQLObjectType, fragments: Map<string, FragmentDefinitionNode>): Shape | undefined {
  const shape: Shape = [];
  const keys = new Map<string, ShapeEntry>();
  for (const selection of selectionSet.selections) {
    if (selection.directives?.length) return undefined;
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name.startsWith('__') && name !== '__typename') return undefined;
      let below: Shape | null = null;
      if (selection.selectionSet) {
        const fieldType = getNamedType(type.getFields()[name]?.type);
        if (!isObjectType(fieldType)) return undefined;
        const inner = shapeOf(selection.selectionSet, fieldType, fragments);
        if (!inner) return undefined;
        below = inner;
      }
      const entry: ShapeEntry = [selection.alias?.value ?? name, name, (selection.arguments ?? []).map((argument) => print(argument)).join(','), below];
      if (!addEntry(shape, keys, entry)) return undefined;
      continue;
    }
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments.get(selection.name.value) : selection;
    if (!fragment || fragment.directives?.length || (fragment.typeCondition && fragment.typeCondition.name.value !== type.name)) return undefined;
    const inner = shapeOf(fragment.selectionSet, type, fragments);
    if (!inner) return undefined;
    for (const entry of inner) if (!addEntry(shape, keys, entry)) return undefined;
  }
  return shape;
}

function operationShape(document: DocumentNode, operation: OperationDefinitionNode, schema: GraphQLSchema): Shape | undefined {
  const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : undefined;
  if (!root || operation.directives?.length) return undefined;
  const fragments = new Map(document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((definition) => [definition.name.value, definition]));
  return shapeOf(operation.selectionSet, root, fragments);
}

/**
 * The shape with each selection set's `__typename`s first, where Apollo's query planner puts the
 * unaliased one whatever the client's order; the other fields keep theirs.
 */
function typenamesFirst(shape: Shape): Shape {
  const typenames: Shape = [];
  const others: Shape = [];
  for (const [key, field, args, below] of shape) (field === '__typename' ? typenames : others).push([key, field, args, below && typenamesFirst(below)]);
  return typenames.concat(others);
}

/**
 * Written out, fragments included, a text may outgrow the plan's, which keeps them: past the larger
 * of the two, the operation goes through Apollo. A fragment with a long argument spread under many
 * aliases would otherwise be sent, and kept, many times over.
 */
const REORDERED_OPERATION_MAX_CHARS = 16 * 1024;

/** A selection set's text in its shape's order; undefined once it has spent `budget.left` characters. */
function selectionText(shape: Shape, budget: { left: number }): string | undefined {
  const parts: string[] = [];
  for (const [key, field, args, below] of shape) {
    budget.left -= key.length + field.length + args.length + 6;
    const inner = budget.left < 0 ? undefined : below ? selectionText(below, budget) : '';
    if (inner === undefined) return undefined;
    parts.push(`${key === field ? '' : `${key}:`}${field}${args ? `(${args})` : ''}${inner}`);
  }
  return `{${parts.join(' ')}}`;
}

/**
 * A plan whose single fetch asks its subgraph for exactly what the client asked: its answer needs no
 * reshaping. Where the fetch differs only by where `__typename` stands (Apollo Client and urql put
 * it last in every selection set, the planner first), the fetch asks in the client's order, fragments
 * written out, so that the subgraph's answer has its keys in the order GraphQL gives the client.
 */
export function directFetch(planner: Planner, document: DocumentNode, operationName: string | undefined): FetchNode | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  const wanted = operationShape(document, operation, planner.graphqlApiSchema);
  if (!wanted) return undefined;
  const plan = planner.queryPlanner.buildQueryPlan(operationFromDocument(planner.apiSchema, document, { operationName }));
  const node = plan.node;
  if (node?.kind !== 'Fetch' || node.requires || node.operationKind !== operation.operation) return undefined;
  const sent = parse(node.operation);
  const sentOperation = getOperationAST(sent, node.operationName);
  const asked = sentOperation && operationShape(sent, sentOperation, planner.graphqlApiSchema);
  if (!asked) return undefined;
  if (JSON.stringify(asked) === JSON.stringify(wanted)) return node;
  if (JSON.stringify(typenamesFirst(asked)) !== JSON.stringify(typenamesFirst(wanted))) return undefined;
  const variables = sentOperation.variableDefinitions?.length ? `(${sentOperation.variableDefinitions.map((definition) => print(definition)).join(',')})` : '';
  const header = `${node.operationKind}${node.operationName ? ` ${node.operationName}` : ''}${variables}`;
  const selection = selectionText(wanted, { left: Math.max(node.operation.length, REORDERED_OPERATION_MAX_CHARS) - header.length });
  if (selection === undefined) return undefined;
  // The parsed document the planner may attach describes its own text, no longer sent.
  const { operationDocumentNode: _planned, ...reordered } = node;
  return { ...reordered, operation: `${header}${selection}` };
}

/**
 * Apollo Gateway reshapes every subgraph answer value by value against the client's operation,
 * even when the plan is one fetch that asks the subgraph exactly what the client asked. That is
 * the common case here (one subgraph per REST service) and the gateway's largest cost of its own
 * on large lists. For those plans this executor returns the subgraph's answer as it is, with
 * errors marked with their service as Apollo would; every other plan goes to Apollo's executor.
 * Such operations are also handed to the pass-through, which serves their repeats without Apollo
 * Server; an answer it fetched but could not pass on arrives here in the context, and is used
 * rather than fetched again.
 */
export function withDirectFetches(
  gateway: ApolloGateway,
  { planner, dataSources, passThrough, cacheSize = 2000 }: { planner: Planner; dataSources: ReadonlyMap<string, SubgraphDataSource>; passThrough?: Pick<PassThrough, 'remember'>; cacheSize?: number },
): GatewayInterface {
  const decisions = createBoundedCache<FetchNode | null>(cacheSize);
  const fetchSpan = createFetchSpans('single-fetch');

  function decide(requestContext: RequestContext): FetchNode | null {
    const key = `${requestContext.operationName ?? ''}\u0000${requestContext.queryHash}`;
    let decision = decisions.get(key);
    if (decision === undefined) {
      try {
        decision = directFetch(planner, requestContext.document, requestContext.operationName ?? undefined) ?? null;
      } catch {
        // Whatever the planner refuses here, Apollo's executor reports properly.
        decision = null;
      }
      decisions.set(key, decision);
    }
    return decision;
  }

  async function answerOf(fetch: FetchNode, source: SubgraphDataSource, requestContext: RequestContext, operation: OperationDefinitionNode, provided: Record<string, unknown>) {
    const context = requestContext.context as GatewayContext;
    const prefetched = context.prefetched;
    if (prefetched?.serviceName !== fetch.serviceName) return fetchSpan(fetch.serviceName, operation, () => source.send(subgraphRequestFor(fetch, provided), context));
    delete context.prefetched;
    if ('error' in prefetched.outcome) throw prefetched.outcome.error;
    return prefetched.outcome.answer;
  }

  return wrapExecutor(gateway, (apolloExecutor) => async (requestContext) => {
    const fetch = decide(requestContext);
    const source = fetch && dataSources.get(fetch.serviceName);
    if (!fetch || !source) return apolloExecutor(requestContext);
    const operation = getOperationAST(requestContext.document, requestContext.operationName ?? undefined)!;
    const provided = requestContext.request.variables ?? {};
    const coerced = getVariableValues(planner.graphqlApiSchema, operation.variableDefinitions ?? [], provided);
    if (coerced.errors) return { errors: coerced.errors };
    if (requestContext.request.query) passThrough?.remember(requestContext.request.query, requestContext.request.operationName, fetch, operation, requestContext.document);
    const response = await answerOf(fetch, source, requestContext, operation, provided).then(
      (answer) => source.read(answer, requestContext.overallCachePolicy),
      // Unreachable, or refused by its breaker: its fields null with their errors, as Apollo's executor answers.
      (error: unknown) => failedDirectFetch(error, fetch, planner.graphqlApiSchema),
    );
    const result: ExecutionResult = { data: response.data ?? null };
    if (response.errors?.length) {
      result.errors = response.errors.map(
        (error) =>
          new GraphQLError(error.message || `Error while fetching subquery from service "${fetch.serviceName}"`, {
            path: error.path,
            extensions: { ...error.extensions, code: error.extensions?.code ?? 'DOWNSTREAM_SERVICE_ERROR', serviceName: fetch.serviceName },
          }),
      );
    }
    return result;
  });
}
