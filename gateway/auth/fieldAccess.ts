import {
  GraphQLError,
  Kind,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  print,
  visit,
  type DirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import type { AccessRequirements } from './requirements.ts';
import { denialOf, type Denial, type Principal } from './principal.ts';

/** One step of a response path: its key, and whether the field there may be null. */
interface Step {
  key: string;
  nullable: boolean;
}

/**
 * An `@skip` or `@include` on the removed field or around it: the field is in the answer only when
 * each holds, which the request's variables may decide.
 */
interface Condition {
  /** `@skip` (the field is out when the value is true) or `@include` (out when false). */
  skip: boolean;
  literal?: boolean;
  variable?: string;
  /** The variable's default in the operation, when it has a boolean one. */
  fallback?: boolean;
}

/** A field the caller may not see: removed before planning, answered as null with an error. */
export interface Removal {
  path: readonly Step[];
  /** `Type.field`, named in the error. */
  field: string;
  /** Undefined when the field is nulled only because everything it selected was removed. */
  code?: Denial;
  /** The field is answered (null, with its error) only where these let it be in the answer. */
  conditions?: readonly Condition[];
}

export interface Restricted {
  /** The operation without what the caller may not see; no fragments, no unused variables. */
  document: DocumentNode;
  text: string;
  removals: readonly Removal[];
  /** Every root field was removed: there is nothing left to plan. */
  empty: boolean;
}

/**
 * Removes from an operation every field whose `@authenticated` / `@requiresScopes` (on the field or
 * on the type it returns) the caller does not meet. Undefined when nothing is removed, which is the
 * common case and costs one walk of the operation. Runs after validation, so fragments are known
 * and the operation is within the depth and field limits; named fragments are inlined, because a
 * fragment may be allowed in one place and not in another.
 */
export function restrictOperation(
  schema: GraphQLSchema,
  requirements: AccessRequirements,
  document: DocumentNode,
  operationName: string | null | undefined,
  principal: Principal | undefined,
): Restricted | undefined {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return undefined;
  const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  if (!root) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const removals: Removal[] = [];
  const defaults = new Map<string, boolean>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue?.kind === Kind.BOOLEAN) defaults.set(definition.variable.name.value, definition.defaultValue.value);
  }
  /** The `@skip`/`@include` of a selection, added to those around it. */
  const within = (conditions: readonly Condition[], directives: readonly DirectiveNode[] | undefined): readonly Condition[] => {
    const added: Condition[] = [];
    for (const directive of directives ?? []) {
      const name = directive.name.value;
      if (name !== 'skip' && name !== 'include') continue;
      const value = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
      if (value?.kind === Kind.BOOLEAN) added.push({ skip: name === 'skip', literal: value.value });
      else if (value?.kind === Kind.VARIABLE) {
        const fallback = defaults.get(value.name.value);
        added.push({ skip: name === 'skip', variable: value.name.value, ...(fallback === undefined ? {} : { fallback }) });
      }
    }
    return added.length ? [...conditions, ...added] : conditions;
  };
  const removal = (entry: Omit<Removal, 'conditions'>, conditions: readonly Condition[]): Removal => (conditions.length ? { ...entry, conditions } : entry);

  function restrict(selectionSet: SelectionSetNode, parent: GraphQLCompositeType, path: readonly Step[], around: readonly Condition[] = []): SelectionSetNode | null {
    const kept: SelectionNode[] = [];
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
        if (!definition) {
          kept.push(selection);
          continue;
        }
        const named = getNamedType(definition.type);
        const step: Step = { key: selection.alias?.value ?? name, nullable: !isNonNullType(definition.type) };
        const field = `${parent.name}.${name}`;
        const conditions = within(around, selection.directives);
        const code = denialOf(principal, requirements.of(field)) ?? denialOf(principal, requirements.of(named.name));
        if (code) {
          removals.push(removal({ path: [...path, step], field, code }, conditions));
          continue;
        }
        if (!selection.selectionSet || !isCompositeType(named)) {
          kept.push(selection);
          continue;
        }
        const inner = restrict(selection.selectionSet, named, [...path, step], conditions);
        if (inner) kept.push(inner === selection.selectionSet ? selection : { ...selection, selectionSet: inner });
        else removals.push(removal({ path: [...path, step], field }, conditions));
        continue;
      }
      const fragment: InlineFragmentNode | undefined =
        selection.kind === Kind.INLINE_FRAGMENT
          ? selection
          : (() => {
              const definition = fragments.get(selection.name.value);
              return definition && { kind: Kind.INLINE_FRAGMENT, typeCondition: definition.typeCondition, directives: selection.directives ?? [], selectionSet: definition.selectionSet };
            })();
      if (!fragment) continue;
      const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
      if (!condition || !isCompositeType(condition)) {
        kept.push(fragment);
        continue;
      }
      const inner = restrict(fragment.selectionSet, condition, path, within(around, fragment.directives));
      if (inner) kept.push(inner === fragment.selectionSet ? fragment : { ...fragment, selectionSet: inner });
    }
    if (kept.length === 0) return null;
    const unchanged = kept.length === selectionSet.selections.length && kept.every((selection, index) => selection === selectionSet.selections[index]);
    return unchanged ? selectionSet : { ...selectionSet, selections: kept };
  }

  const selectionSet = restrict(operation.selectionSet, root, []);
  if (removals.length === 0) return undefined;
  const restricted: OperationDefinitionNode = {
    ...operation,
    // An empty root cannot be printed as a valid operation; it is never planned (see `empty`).
    selectionSet: selectionSet ?? { kind: Kind.SELECTION_SET, selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } }] },
  };
  const used = new Set<string>();
  visit(restricted.selectionSet, { Variable: (node) => void used.add(node.name.value) });
  for (const directive of operation.directives ?? []) visit(directive, { Variable: (node) => void used.add(node.name.value) });
  const withUsedVariables: OperationDefinitionNode = { ...restricted, variableDefinitions: (operation.variableDefinitions ?? []).filter((definition) => used.has(definition.variable.name.value)) };
  const restrictedDocument: DocumentNode = { kind: Kind.DOCUMENT, definitions: [withUsedVariables] };
  return { document: restrictedDocument, text: print(restrictedDocument), removals, empty: selectionSet === null };
}

type Data = Record<string, unknown>;

function setNull(target: unknown, path: readonly Step[], depth: number): void {
  if (Array.isArray(target)) {
    for (const item of target) setNull(item, path, depth);
    return;
  }
  if (!target || typeof target !== 'object') return;
  const object = target as Data;
  const step = path[depth]!;
  if (depth === path.length - 1) object[step.key] = null;
  else setNull(object[step.key], path, depth + 1);
}

/** Whether a `@skip`/`@include` lets its field into the answer, as graphql-js reads it. */
function holds(condition: Condition, variables: Readonly<Record<string, unknown>> | null | undefined): boolean {
  const given = condition.variable === undefined ? condition.literal : variables?.[condition.variable];
  const value = typeof given === 'boolean' ? given : condition.fallback;
  // A value graphql-js would refuse never reaches here; absent, the field stays, as before.
  if (value === undefined) return true;
  return condition.skip ? !value : value;
}

/**
 * The answer the caller would have had with the removed fields in it: each one null (or, where it
 * may not be null, its nearest nullable ancestor, as GraphQL propagates a null), each with an error
 * naming the field.
 */
export function applyRemovals(data: Data | null | undefined, removals: readonly Removal[], variables?: Readonly<Record<string, unknown>> | null): { data: Data | null; errors: GraphQLError[] } {
  const errors: GraphQLError[] = [];
  let result: Data | null = data ?? null;
  for (const removal of removals) {
    // A field the client's @skip or @include left out is not in the answer: neither null nor an error.
    if (removal.conditions && !removal.conditions.every((condition) => holds(condition, variables))) continue;
    if (removal.code) {
      errors.push(
        new GraphQLError(removal.code === 'UNAUTHENTICATED' ? `${removal.field} needs an authenticated caller` : `${removal.field} needs a scope the caller's token does not hold`, {
          path: removal.path.map((step) => step.key),
          extensions: { code: removal.code, field: removal.field },
        }),
      );
    }
    let end = removal.path.length - 1;
    while (end >= 0 && !removal.path[end]!.nullable) end -= 1;
    if (end < 0) result = null;
    else if (result) setNull(result, removal.path.slice(0, end + 1), 0);
  }
  return { data: result, errors };
}
