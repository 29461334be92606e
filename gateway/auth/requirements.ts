import { Kind, parse, print, valueFromASTUntyped, visit, type DirectiveNode, type DocumentNode } from 'graphql';

/**
 * What a field or type asks of its caller, as the subgraphs declare it with the federation
 * directives `@authenticated` and `@requiresScopes` and composition carries into the supergraph.
 * `anyOf` is the directive's OR of ANDs: one inner list held entirely is enough.
 */
export interface Requirement {
  authenticated: boolean;
  anyOf?: readonly (readonly string[])[];
}

export interface AccessRequirements {
  /** `Type.field` and `Type` (the type's own requirement applies to every field returning it). */
  of(key: string): Requirement | undefined;
  readonly size: number;
}

function requirementOf(directives: readonly DirectiveNode[] | undefined): Requirement | undefined {
  let requirement: { authenticated: boolean; anyOf?: string[][] } | undefined;
  for (const directive of directives ?? []) {
    if (directive.name.value === 'authenticated') requirement = { ...requirement, authenticated: true };
    if (directive.name.value === 'requiresScopes') {
      const scopes = directive.arguments?.find((argument) => argument.name.value === 'scopes');
      const value = scopes ? (valueFromASTUntyped(scopes.value) as unknown) : undefined;
      if (!Array.isArray(value)) continue;
      const anyOf = value.filter(Array.isArray).map((group) => (group as unknown[]).map(String));
      // Requiring scopes implies a caller: an anonymous request never holds one.
      requirement = { authenticated: true, anyOf: [...(requirement?.anyOf ?? []), ...anyOf] };
    }
  }
  return requirement;
}

/** Reads the access directives of a composed supergraph, once, at start. */
export function readAccessRequirements(supergraph: string | DocumentNode): AccessRequirements {
  const document = typeof supergraph === 'string' ? parse(supergraph) : supergraph;
  const table = new Map<string, Requirement>();
  for (const definition of document.definitions) {
    if (!('name' in definition) || !definition.name || !('directives' in definition)) continue;
    if (definition.kind === Kind.DIRECTIVE_DEFINITION) continue;
    const typeName = definition.name.value;
    const own = requirementOf(definition.directives);
    if (own) table.set(typeName, own);
    if ('fields' in definition) {
      for (const field of definition.fields ?? []) {
        const requirement = requirementOf(field.directives);
        if (requirement) table.set(`${typeName}.${field.name.value}`, requirement);
      }
    }
  }
  return { of: (key) => table.get(key), size: table.size };
}

const SECURITY_DIRECTIVES = new Set(['authenticated', 'requiresScopes']);
const SECURITY_FEATURE = /^https:\/\/specs\.apollo\.dev\/(authenticated|requiresScopes)\//;

/**
 * The supergraph without its access directives, for Apollo Gateway: it refuses any `for: SECURITY`
 * feature it does not enforce itself (Apollo Router does), and this graph enforces them before
 * Apollo sees an operation. The directives never reach the API schema, so clients see the same graph.
 */
export function withoutAccessDirectives(supergraph: string): string {
  const document = parse(supergraph);
  const stripped = visit(document, {
    Directive(node) {
      if (SECURITY_DIRECTIVES.has(node.name.value)) return null;
      if (node.name.value !== 'link') return undefined;
      const url = node.arguments?.find((argument) => argument.name.value === 'url')?.value;
      return url?.kind === Kind.STRING && SECURITY_FEATURE.test(url.value) ? null : undefined;
    },
    DirectiveDefinition: (node) => (SECURITY_DIRECTIVES.has(node.name.value) ? null : undefined),
    ScalarTypeDefinition: (node) => (node.name.value.startsWith('requiresScopes__') ? null : undefined),
  });
  return print(stripped);
}
