import {
  GraphQLError,
  Kind,
  getNamedType,
  getOperationAST,
  isObjectType,
  print,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { operationFromDocument, type Schema } from '@apollo/federation-internals';
import type { FetchNode, QueryPlan, QueryPlanner } from '@apollo/query-planner';
import { buildOperationContext } from '@apollo/gateway';

type OperationContext = ReturnType<typeof buildOperationContext>;

/** The variable the gateway adds to resume an upstream stream from its last event (refused in a client's operation). */
export const RESUME_VARIABLE = 'gatewayResumeAfter';
/** The alias under which the gateway reads each event's cursor, suffixed when the operation uses the name already. */
export const CURSOR_ALIAS = 'gatewayResumeCursor';

export interface SubscriptionPlan {
  /** The operation as planned: the client's with its root fragments inlined, plus the resume argument and cursor when resumable. */
  document: DocumentNode;
  text: string;
  operationName: string | undefined;
  operationContext: OperationContext;
  /** Primary then the entity fetches, as one plan `executeQueryPlan` accepts. */
  queryPlan: QueryPlan;
  primary: FetchNode;
  /** Response name of the root subscription field. */
  rootField: string;
  resumable: boolean;
  /** Where each event's cursor is in the primary's answer (resumable plans): a name no client field uses. */
  cursorAlias?: string;
  /**
   * Where the client's own `after` comes from, when it gave one; `alsoElsewhere` when its variable
   * is used besides, so that its value still tells two subscriptions apart.
   */
  clientAfter?: { literal: string } | { variable: string; alsoElsewhere: boolean };
}

const validationError = (message: string) => new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });

/** What graphql-js 17 and the spec's Single Root Field rule say of `@skip`/`@include` at a subscription's root. */
export const rootDirectivesMessage = (operation: OperationDefinitionNode) =>
  `${operation.name ? `Subscription "${operation.name.value}"` : 'Anonymous Subscription'} must not use \`@skip\` or \`@include\` directives in the top level selection.`;

const isConditional = (selection: SelectionNode) => selection.directives?.some((directive) => directive.name.value === 'skip' || directive.name.value === 'include') ?? false;

/**
 * The selections of a subscription's top level, named fragment spreads and inline fragments walked
 * into (each named fragment once: spreading it again adds nothing), each handed to `see`.
 */
export function topLevelSelections(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, see: (selection: SelectionNode) => void): void {
  const expanded = new Set<string>();
  const walk = (selections: readonly SelectionNode[]) => {
    for (const selection of selections) {
      see(selection);
      if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet.selections);
      else if (selection.kind === Kind.FRAGMENT_SPREAD && !expanded.has(selection.name.value)) {
        expanded.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) walk(fragment.selectionSet.selections);
      }
    }
  };
  walk(operation.selectionSet.selections);
}

/** The selections of a subscription's top level that carry `@skip` or `@include`, which the spec forbids there. */
export function conditionalTopLevel(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): SelectionNode[] {
  const conditional: SelectionNode[] = [];
  topLevelSelections(operation, fragments, (selection) => {
    if (isConditional(selection)) conditional.push(selection);
  });
  return conditional;
}

export const fragmentsOf = (document: DocumentNode) =>
  new Map(document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((definition) => [definition.name.value, definition]));

/**
 * The subscription's one root field with the fragments around it inlined and its occurrences
 * merged (`bonusCreated { id } ...F` with `F` selecting `bonusCreated { cursor }`): what the
 * gateway adds for resuming then goes on the field whatever form the client wrote it in.
 */
function rootFieldOf(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): FieldNode {
  const fields: FieldNode[] = [];
  topLevelSelections(operation, fragments, (selection) => {
    if (isConditional(selection)) throw validationError(rootDirectivesMessage(operation));
    if (selection.kind === Kind.FIELD) fields.push(selection);
    else if (selection.directives?.length) throw validationError('a fragment at the top level of a subscription cannot carry directives');
    else if (selection.kind === Kind.FRAGMENT_SPREAD && !fragments.has(selection.name.value)) throw validationError(`Unknown fragment "${selection.name.value}".`);
  });
  const [first, ...others] = fields;
  const responseName = (field: FieldNode) => field.alias?.value ?? field.name.value;
  if (!first || others.some((field) => responseName(field) !== responseName(first))) throw validationError('a subscription must select exactly one top level field');
  // Arguments in any order, as graphql-js's rule on overlapping fields compares them.
  const signature = (field: FieldNode) => [field.name.value, ...(field.arguments ?? []).map((argument) => print(argument)).sort(), '@', ...(field.directives ?? []).map((directive) => print(directive))].join('\u0000');
  if (others.some((field) => signature(field) !== signature(first))) {
    throw validationError(`the top level field "${responseName(first)}" is selected with different arguments or directives`);
  }
  if (!others.length) return first;
  const selections = fields.flatMap((field) => field.selectionSet?.selections ?? []);
  return { ...first, ...(selections.length ? { selectionSet: { kind: Kind.SELECTION_SET, selections } } : {}) };
}

/** Every name the document spells (fields, aliases, arguments, fragments, variables...). */
function namesIn(document: DocumentNode): Set<string> {
  const names = new Set<string>();
  visit(document, {
    Name(node) {
      names.add(node.value);
    },
  });
  return names;
}

/** Whether `$name` is used in the document (its definition aside). */
function usesVariable(document: DocumentNode, name: string): boolean {
  let used = false;
  visit(document, {
    VariableDefinition: () => false,
    Variable(node) {
      if (node.name.value === name) used = true;
    },
  });
  return used;
}

/**
 * Adds what resuming needs to a subscription whose field takes `after` and whose event has a
 * `cursor`: the argument bound to a gateway variable, and the cursor under a private alias that no
 * name of the client's document takes (the client's own field of that name is left as it is).
 */
function withResume(document: DocumentNode, operation: OperationDefinitionNode, field: FieldNode): { operation: OperationDefinitionNode; cursorAlias: string; clientAfter?: { literal: string } | { variable: string } } {
  if (operation.variableDefinitions?.some((definition) => definition.variable.name.value === RESUME_VARIABLE)) {
    throw validationError(`$${RESUME_VARIABLE} is reserved by the gateway`);
  }
  const taken = namesIn(document);
  let cursorAlias = CURSOR_ALIAS;
  for (let suffix = 1; taken.has(cursorAlias); suffix += 1) cursorAlias = `${CURSOR_ALIAS}${suffix}`;
  const given = field.arguments?.find((argument) => argument.name.value === 'after');
  const clientAfter =
    given?.value.kind === Kind.STRING ? { literal: given.value.value } : given?.value.kind === Kind.VARIABLE ? { variable: given.value.name.value } : undefined;
  const resumedField: FieldNode = {
    ...field,
    arguments: [
      ...(field.arguments ?? []).filter((argument) => argument.name.value !== 'after'),
      { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'after' }, value: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: RESUME_VARIABLE } } },
    ],
    selectionSet: {
      kind: Kind.SELECTION_SET,
      selections: [
        ...(field.selectionSet?.selections ?? []),
        { kind: Kind.FIELD, alias: { kind: Kind.NAME, value: cursorAlias }, name: { kind: Kind.NAME, value: 'cursor' } },
      ],
    },
  };
  return {
    operation: {
      ...operation,
      variableDefinitions: [
        ...(operation.variableDefinitions ?? []),
        { kind: Kind.VARIABLE_DEFINITION, variable: { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: RESUME_VARIABLE } }, type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: 'String' } } },
      ],
      selectionSet: { ...operation.selectionSet, selections: [resumedField] },
    },
    cursorAlias,
    ...(clientAfter ? { clientAfter } : {}),
  };
}

/** The operation and the fragments it still spreads (transitively), nothing else of the document. */
function documentOf(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): DocumentNode {
  const kept = new Map<string, FragmentDefinitionNode>();
  const spreadIn = (node: OperationDefinitionNode | FragmentDefinitionNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (!fragment || kept.has(spread.name.value)) return;
        kept.set(spread.name.value, fragment);
        spreadIn(fragment);
      },
    });
  spreadIn(operation);
  return { kind: Kind.DOCUMENT, definitions: [operation, ...kept.values()] };
}

/** What planning a subscription needs of the supergraph. */
export interface SubscriptionPlanning {
  queryPlanner: QueryPlanner;
  apiSchema: Schema;
  graphqlApiSchema: GraphQLSchema;
}

/**
 * Plans a subscription with Apollo's query planner, resumable when its field takes `after` and its
 * event has a `cursor`; or says why it cannot.
 */
export function planSubscription(planning: SubscriptionPlanning, document: DocumentNode, operationName: string | undefined): SubscriptionPlan | readonly GraphQLError[] {
  try {
    return build(planning, document, operationName);
  } catch (error) {
    if (error instanceof GraphQLError) return [error];
    return [validationError(`the subscription could not be planned: ${(error as Error).message}`)];
  }
}

function build({ queryPlanner, apiSchema, graphqlApiSchema }: SubscriptionPlanning, document: DocumentNode, operationName: string | undefined): SubscriptionPlan {
  const operation = getOperationAST(document, operationName);
  if (!operation) throw validationError(operationName ? `no operation named ${operationName}` : 'the document must hold exactly one operation, or name the one to run');
  if (operation.operation !== 'subscription') throw validationError('only subscriptions are planned here');
  const fragments = fragmentsOf(document);
  const root = rootFieldOf(operation, fragments);
  const flat: OperationDefinitionNode = { ...operation, selectionSet: { ...operation.selectionSet, selections: [root] } };
  const subscriptionType = graphqlApiSchema.getSubscriptionType();
  const definition = subscriptionType?.getFields()[root.name.value];
  const eventType = definition && getNamedType(definition.type);
  let planned = flat;
  let cursorAlias: string | undefined;
  let given: { literal: string } | { variable: string } | undefined;
  const resumable = Boolean(definition?.args.some((argument) => argument.name === 'after') && isObjectType(eventType) && eventType.getFields().cursor);
  if (resumable) ({ operation: planned, cursorAlias, clientAfter: given } = withResume(document, flat, root));
  let rewritten = documentOf(planned, fragments);
  const clientAfter: SubscriptionPlan['clientAfter'] = given && 'variable' in given ? { variable: given.variable, alsoElsewhere: usesVariable(rewritten, given.variable) } : given;
  if (clientAfter && 'variable' in clientAfter && !clientAfter.alsoElsewhere) {
    // Used nowhere once the gateway's own `after` took its place: without it, the operation is the
    // same text as the one written with no `after`, and their subscriptions can share a stream.
    planned = { ...planned, variableDefinitions: planned.variableDefinitions?.filter((variable) => variable.variable.name.value !== clientAfter.variable) };
    rewritten = documentOf(planned, fragments);
  }
  const plan = queryPlanner.buildQueryPlan(operationFromDocument(apiSchema, rewritten, { operationName }));
  if (plan.node?.kind !== 'Subscription') throw validationError('the planner did not produce a subscription plan');
  const { primary, rest } = plan.node;
  return {
    document: rewritten,
    text: print(rewritten),
    operationName,
    operationContext: buildOperationContext({ schema: graphqlApiSchema, operationDocument: rewritten, operationName }),
    queryPlan: { kind: 'QueryPlan', node: rest ? { kind: 'Sequence', nodes: [primary, rest] } : primary },
    primary,
    rootField: root.alias?.value ?? root.name.value,
    resumable,
    ...(cursorAlias ? { cursorAlias } : {}),
    ...(clientAfter ? { clientAfter } : {}),
  };
}
