import {
  GraphQLError,
  Kind,
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  parse,
  type ConstDirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { ErrorCode, graphError } from '../lib/errors.ts';
import { createBoundedCache, type BoundedCache } from '../lib/boundedCache.ts';

/** A field's cost as its subgraph declares it with `@cost` and `@listSize` (composed into the supergraph). */
export interface FieldCost {
  /** Upstream calls the field's resolver makes for one parent. */
  weight?: number;
  /** `@cost` on arguments: calls per element of a list argument (per value of any other). */
  argumentWeights?: Map<string, number>;
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
  /** The subgraph that resolves the field, when the supergraph says so. */
  subgraph?: string;
}

/** Every declared cost of the supergraph, by `Type.field`. */
export type CostTable = Map<string, FieldCost>;

export interface Estimate {
  /** Upstream calls the operation may make, at most. */
  calls: number;
  /** The same, by the subgraph whose resolvers make them. */
  bySubgraph: Map<string, number>;
}

export interface DemandControlOptions {
  /** The API schema operations are checked against. */
  schema: GraphQLSchema;
  costs: CostTable;
  /** Upstream calls one operation may cost. @default 1000 */
  maxUpstreamCalls?: number;
  /** Items assumed in a list whose field declares no size. @default 100 */
  defaultListSize?: number;
}

const intArgument = (directive: ConstDirectiveNode, name: string): number | undefined => {
  const value = directive.arguments?.find((argument) => argument.name.value === name)?.value;
  return value?.kind === Kind.INT ? Number(value.value) : undefined;
};
const stringsArgument = (directive: ConstDirectiveNode, name: string): string[] | undefined => {
  const value = directive.arguments?.find((argument) => argument.name.value === name)?.value;
  return value?.kind === Kind.LIST ? value.values.flatMap((item) => (item.kind === Kind.STRING ? [item.value] : [])) : undefined;
};
const enumArgument = (directive: ConstDirectiveNode, name: string): string | undefined => {
  const value = directive.arguments?.find((argument) => argument.name.value === name)?.value;
  return value?.kind === Kind.ENUM ? value.value : undefined;
};

/**
 * Reads `@cost`, `@listSize` and the owning subgraph (`@join__field(graph:)`, else the type's only
 * `@join__type`) of every field from the supergraph SDL.
 */
export function readCostTable(supergraphSdl: string): CostTable {
  const document = parse(supergraphSdl);
  const graphNames = new Map<string, string>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.ENUM_TYPE_DEFINITION || definition.name.value !== 'join__Graph') continue;
    for (const value of definition.values ?? []) {
      const name = value.directives?.find((directive) => directive.name.value === 'join__graph');
      const graph = name?.arguments?.find((argument) => argument.name.value === 'name')?.value;
      if (graph?.kind === Kind.STRING) graphNames.set(value.name.value, graph.value);
    }
  }
  const table: CostTable = new Map();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.INTERFACE_TYPE_DEFINITION) continue;
    const typeGraphs = (definition.directives ?? []).filter((directive) => directive.name.value === 'join__type').map((directive) => enumArgument(directive, 'graph'));
    const typeOwner = typeGraphs.length === 1 && typeGraphs[0] ? graphNames.get(typeGraphs[0]) : undefined;
    for (const field of definition.fields ?? []) {
      const cost: FieldCost = {};
      const joined = (field.directives ?? []).filter((directive) => directive.name.value === 'join__field').map((directive) => enumArgument(directive, 'graph'));
      const owner = joined.length === 1 && joined[0] ? graphNames.get(joined[0]) : joined.length === 0 ? typeOwner : undefined;
      if (owner) cost.subgraph = owner;
      for (const directive of field.directives ?? []) {
        if (directive.name.value === 'cost') cost.weight = intArgument(directive, 'weight') ?? 0;
        if (directive.name.value === 'listSize') {
          const assumedSize = intArgument(directive, 'assumedSize');
          const slicingArguments = stringsArgument(directive, 'slicingArguments');
          const sizedFields = stringsArgument(directive, 'sizedFields');
          if (assumedSize !== undefined) cost.assumedSize = assumedSize;
          if (slicingArguments) cost.slicingArguments = slicingArguments;
          if (sizedFields) cost.sizedFields = sizedFields;
        }
      }
      for (const argument of field.arguments ?? []) {
        const weight = argument.directives?.find((directive) => directive.name.value === 'cost');
        if (weight) (cost.argumentWeights ??= new Map()).set(argument.name.value, intArgument(weight, 'weight') ?? 0);
      }
      table.set(`${definition.name.value}.${field.name.value}`, cost);
    }
  }
  return table;
}

function valueOf(node: ValueNode, variables: Record<string, unknown>, read?: (name: string) => void): unknown {
  switch (node.kind) {
    case Kind.VARIABLE:
      read?.(node.name.value);
      return variables[node.name.value];
    case Kind.INT:
      return Number(node.value);
    case Kind.LIST:
      return node.values;
    default:
      return undefined;
  }
}

/**
 * All an estimate reads of a variable's value: a number's value, a list's length, whether it is
 * null or absent. Two sets of variables alike in these have the same estimate.
 */
function costingFormOf(value: unknown): string {
  if (typeof value === 'number') return `n${value}`;
  if (Array.isArray(value)) return `a${value.length}`;
  return value === undefined || value === null ? 'u' : 'o';
}

/** Estimates kept per operation, one per costing form of its variables (`first: 10`, `first: 20`...). */
const ESTIMATES_PER_OPERATION = 32;

interface KnownEstimates {
  document: DocumentNode;
  /** The operation's declared variables, whose costing forms key `estimates`. */
  names: string[];
  estimates: BoundedCache<Estimate>;
}

function unwrapsToList(type: GraphQLOutputType): boolean {
  return isListType(isNonNullType(type) ? type.ofType : type);
}

/**
 * Demand control: before an operation runs, the upstream calls it may cause are estimated from
 * the schema's declared costs and the operation's arguments (docs/LIMITS.md, "Demand control").
 * One field costs, for each instance of its parent, its `@cost` weight plus its arguments'
 * weights; a list multiplies what is selected below it by its size (the slicing argument, such as
 * `first`, else `assumedSize`, else the default size); a connection's size applies to its
 * `sizedFields` (`edges`). Fields of the root types cost 1 unless they declare otherwise; other
 * fields cost nothing unless they declare a weight. Fragments are expanded where they are spread:
 * the operation limits, checked first, bound what this walks to `MAX_QUERY_FIELDS` fields.
 */
export function createDemandControl({ schema, costs, maxUpstreamCalls = 1000, defaultListSize = 100 }: DemandControlOptions) {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean).map((type) => type!.name));

  /**
   * Estimates already made, by operation (kept as long as whoever parsed the operation keeps it):
   * a repeat operation is walked once per costing form of its variables, not on every request.
   */
  const known = new WeakMap<OperationDefinitionNode, KnownEstimates>();

  /** The estimate of an operation, shared by every request whose variables cost alike. Read-only. */
  function estimate(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> = {}): Estimate {
    let memo = known.get(operation);
    if (memo?.document !== document) {
      memo = { document, names: (operation.variableDefinitions ?? []).map((definition) => definition.variable.name.value), estimates: createBoundedCache<Estimate>(ESTIMATES_PER_OPERATION) };
      known.set(operation, memo);
    }
    const key = memo.names.map((name) => costingFormOf(variables[name])).join(',');
    const kept = memo.estimates.get(key);
    if (kept) return kept;
    const declared = new Set(memo.names);
    let undeclared = false;
    const found = walkEstimate(document, operation, variables, (name) => {
      if (!declared.has(name)) undeclared = true;
    });
    // A variable the operation does not declare (refused by validation, which runs first) is not in the key.
    if (!undeclared) memo.estimates.set(key, found);
    return found;
  }

  function walkEstimate(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>, read: (name: string) => void): Estimate {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    const bySubgraph = new Map<string, number>();
    let calls = 0;
    // Spreads are bounded by the operation limits (which run first); a cycle is refused there too.
    const spreading = new Set<string>();

    const charge = (subgraph: string | undefined, amount: number) => {
      if (amount <= 0) return;
      calls += amount;
      const key = subgraph ?? '';
      bySubgraph.set(key, (bySubgraph.get(key) ?? 0) + amount);
    };

    const sizeOf = (field: FieldNode, cost: FieldCost | undefined): number => {
      for (const name of cost?.slicingArguments ?? []) {
        const argument = field.arguments?.find((candidate) => candidate.name.value === name);
        const value = argument && valueOf(argument.value, variables, read);
        if (typeof value === 'number' && Number.isFinite(value)) return Math.max(0, value);
        if (Array.isArray(value)) return value.length;
      }
      return cost?.assumedSize ?? defaultListSize;
    };

    const argumentCost = (field: FieldNode, cost: FieldCost | undefined): number => {
      let total = 0;
      for (const [name, weight] of cost?.argumentWeights ?? []) {
        const argument = field.arguments?.find((candidate) => candidate.name.value === name);
        if (!argument) continue;
        const value = valueOf(argument.value, variables, read);
        total += weight * (Array.isArray(value) ? value.length : value === undefined || value === null ? 0 : 1);
      }
      return total;
    };

    function walk(selectionSet: SelectionSetNode, type: GraphQLCompositeType, multiplier: number, owner: string | undefined, sized?: { fields: string[]; size: number }): void {
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          if (name.startsWith('__') || !(isObjectType(type) || isInterfaceType(type))) continue;
          const definition = type.getFields()[name];
          if (!definition) continue;
          const cost = costs.get(`${type.name}.${name}`);
          const subgraph = cost?.subgraph ?? owner;
          const weight = cost?.weight ?? (roots.has(type.name) ? 1 : 0);
          charge(subgraph, multiplier * (weight + argumentCost(selection, cost)));
          if (!selection.selectionSet) continue;
          const inner = getNamedType(definition.type) as GraphQLCompositeType;
          const instances = sized?.fields.includes(name) ? sized.size : cost?.sizedFields ? 1 : unwrapsToList(definition.type) ? sizeOf(selection, cost) : 1;
          const below = cost?.sizedFields ? { fields: cost.sizedFields, size: sizeOf(selection, cost) } : undefined;
          walk(selection.selectionSet, inner, multiplier * instances, subgraph, below);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          const condition = selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) as GraphQLCompositeType | undefined) : type;
          walk(selection.selectionSet, condition ?? type, multiplier, owner, sized);
        } else {
          const fragment = fragments.get(selection.name.value);
          if (!fragment || spreading.has(fragment.name.value)) continue;
          spreading.add(fragment.name.value);
          const condition = schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType | undefined;
          walk(fragment.selectionSet, condition ?? type, multiplier, owner, sized);
          spreading.delete(fragment.name.value);
        }
      }
    }

    const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
    if (root) walk(operation.selectionSet, root, 1, undefined);
    return { calls, bySubgraph };
  }

  return {
    maxUpstreamCalls,
    estimate,
    /** OPERATION_TOO_EXPENSIVE when the operation's estimate is over the budget, else its estimate. */
    check(document: DocumentNode, operation: OperationDefinitionNode, variables?: Record<string, unknown>): { estimate: Estimate } | { error: GraphQLError } {
      const found = estimate(document, operation, variables);
      if (found.calls <= maxUpstreamCalls) return { estimate: found };
      const calls = Math.min(found.calls, Number.MAX_SAFE_INTEGER);
      return {
        error: graphError(`the operation may make ${calls} upstream calls; at most ${maxUpstreamCalls} are allowed`, {
          code: ErrorCode.OperationTooExpensive,
          estimate: calls,
          budget: maxUpstreamCalls,
        }),
      };
    },
    /** The budget of one run of an operation, shared out among its subgraphs. */
    ledger: (found: Estimate) => createCallLedger(maxUpstreamCalls, found),
  };
}

export type DemandControl = ReturnType<typeof createDemandControl>;

/**
 * The upstream calls one operation may still make, shared among the subgraph requests it causes.
 *
 * Each subgraph's share of the budget is in proportion to its part of the estimate; what no
 * subgraph was estimated to need is a pool for the others. A subgraph request takes all of its
 * subgraph's share (or the pool) while it runs, and gives back what its answer says it did not
 * use. So requests running at once never hold more than the budget between them.
 */
export interface CallLedger {
  /** What the next request to `subgraph` may spend; nothing is left for another request to it until it settles. */
  reserve(subgraph: string): number;
  /** Gives back what a request did not spend: `used` as reported, or everything reserved when unknown. */
  settle(subgraph: string, reserved: number, used: number | undefined): void;
  /** Upstream calls spent so far, as the subgraphs reported them (all that was reserved where one did not say). */
  readonly spent: number;
}

export function createCallLedger(budget: number, estimate: Estimate): CallLedger {
  return new OperationCalls(budget, estimate);
}

/** A class, not a literal of closures and a getter: one is made for every operation. */
class OperationCalls implements CallLedger {
  private readonly shares = new Map<string, number>();
  private pool: number;
  private used = 0;

  constructor(budget: number, { calls, bySubgraph }: Estimate) {
    this.pool = budget;
    if (calls > 0) {
      for (const [subgraph, estimated] of bySubgraph) {
        if (!subgraph) continue;
        const share = Math.floor((budget * estimated) / calls);
        this.shares.set(subgraph, share);
        this.pool -= share;
      }
    }
  }

  reserve(subgraph: string): number {
    const share = this.shares.get(subgraph);
    if (share === undefined) {
      const taken = this.pool;
      this.pool = 0;
      return taken;
    }
    this.shares.set(subgraph, 0);
    return share;
  }

  settle(subgraph: string, reserved: number, used: number | undefined): void {
    const back = used === undefined || !Number.isFinite(used) ? 0 : Math.max(0, reserved - used);
    this.used += reserved - back;
    const share = this.shares.get(subgraph);
    if (share !== undefined) this.shares.set(subgraph, share + back);
    else this.pool += back;
  }

  get spent(): number {
    return this.used;
  }
}
