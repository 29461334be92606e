import {
  GraphQLError,
  Kind,
  getNamedType,
  getOperationAST,
  isObjectType,
  print,
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { operationFromDocument, type Schema } from '@apollo/federation-internals';
import type { FetchNode, QueryPlan, QueryPlanner } from '@apollo/query-planner';
import { buildOperationContext } from '@apollo/gateway';

type OperationContext = ReturnType<typeof buildOperationContext>;

/** The variable and alias the gateway adds to resume an upstream stream from its last event. */
export const RESUME_VARIABLE = 'gatewayResumeAfter';
export const CURSOR_ALIAS = 'gatewayResumeCursor';

export interface SubscriptionPlan {
  /** The operation as planned: the client's, plus the resume argument and cursor when resumable. */
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
  /** Where the client's own `after` comes from, when it gave one. */
  clientAfter?: { literal: string } | { variable: string };
}

const validationError = (message: string) => new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });

/**
 * Adds what resuming needs to a subscription whose field takes `after` and whose event has a
 * `cursor`: the argument bound to a gateway variable, and the cursor under a private alias.
 */
function withResume(operation: OperationDefinitionNode, field: FieldNode): { operation: OperationDefinitionNode; clientAfter?: SubscriptionPlan['clientAfter'] } {
  if (operation.variableDefinitions?.some((definition) => definition.variable.name.value === RESUME_VARIABLE)) {
    throw validationError(`$${RESUME_VARIABLE} is reserved by the gateway`);
  }
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
        { kind: Kind.FIELD, alias: { kind: Kind.NAME, value: CURSOR_ALIAS }, name: { kind: Kind.NAME, value: 'cursor' } },
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
    ...(clientAfter ? { clientAfter } : {}),
  };
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
  const [first, ...others] = operation.selectionSet.selections;
  const subscriptionType = graphqlApiSchema.getSubscriptionType();
  let planned = operation;
  let resumable = false;
  let clientAfter: SubscriptionPlan['clientAfter'];
  if (first?.kind === Kind.FIELD && others.length === 0 && subscriptionType) {
    const definition = subscriptionType.getFields()[first.name.value];
    const eventType = definition && getNamedType(definition.type);
    if (definition?.args.some((argument) => argument.name === 'after') && isObjectType(eventType) && eventType.getFields().cursor) {
      ({ operation: planned, clientAfter } = withResume(operation, first));
      resumable = true;
    }
  }
  const rewritten: DocumentNode = { ...document, definitions: document.definitions.map((definition) => (definition === operation ? planned : definition)) };
  const plan = queryPlanner.buildQueryPlan(operationFromDocument(apiSchema, rewritten, { operationName }));
  if (plan.node?.kind !== 'Subscription') throw validationError('the planner did not produce a subscription plan');
  const { primary, rest } = plan.node;
  const root = planned.selectionSet.selections[0] as FieldNode;
  return {
    document: rewritten,
    text: print(rewritten),
    operationName,
    operationContext: buildOperationContext({ schema: graphqlApiSchema, operationDocument: rewritten, operationName }),
    queryPlan: { kind: 'QueryPlan', node: rest ? { kind: 'Sequence', nodes: [primary, rest] } : primary },
    primary,
    rootField: root.alias?.value ?? root.name.value,
    resumable,
    ...(clientAfter ? { clientAfter } : {}),
  };
}
