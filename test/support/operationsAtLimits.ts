import { parse } from 'graphql';
import { GATEWAY_OPERATION_LIMITS, measureDocument, type Measure } from '../../lib/operationShapeLimits.ts';

const { maxDepth, maxFields, maxAliases, maxRootFields } = GATEWAY_OPERATION_LIMITS;

/** An operation's measure, fragments expanded, as the gateway's rule takes it. */
export function measureOf(query: string): Measure {
  const [measure] = measureDocument(parse(query), Number.MAX_SAFE_INTEGER).operations.values();
  return measure!;
}

/** `__typename` repeated: fields that cost nothing upstream, to bring a count up to a limit. */
const padding = (count: number) => ' __typename'.repeat(count);

/** 16 fields of the catalogue, nested three deep. */
const CATALOG = 'type name rewards { name imageUrl minimumDisplayPrice disclaimerHtml warning description { text html } denominations { id name price displayPrice } }';

/**
 * A query at all four of the gateway's default limits at once, over two subgraphs: 12 levels deep
 * (dashboard and widget in turn, from `dashboardId`), 1,000 fields, 100 aliases and 50 root
 * fields, most of them aliased catalogues that the recognition subgraph answers in one fetch.
 */
export function queryAtGatewayLimits(dashboardId: string): string {
  const deep = `deep: dashboard(id: ${JSON.stringify(dashboardId)}) { widgets(first: 1) { edges { node { dashboard { widgets(first: 1) { edges { node { dashboard { widgets(first: 1) { pageInfo { hasNextPage } } } } } } } } } } }`;
  const catalogs = Array.from({ length: maxRootFields - 2 }, (_, index) => `c${index}: rewardCatalog { ${CATALOG} }`);
  const named = Array.from({ length: maxAliases - catalogs.length - 1 }, (_, index) => `n${index}: quotaRemaining`).join(' ');
  const draft = (pad: number) => `{ ${deep} dashboardStats { requestCount ${named}${padding(pad)} } ${catalogs.join(' ')} }`;
  return draft(maxFields - measureOf(draft(0)).fields);
}

/**
 * A subscription at the gateway's field and alias limits (one root field, and the schema goes
 * no deeper than 6 below a subscription): `celebration` comes from the kudos subgraph
 * (test/support/kudosSubgraph.ts), an entity fetch for each of two bonus paths per event. The
 * gateway adds its cursor alias, so the recognition subgraph is asked for 101 aliases.
 */
export function subscriptionAtGatewayLimits(): string {
  const amounts = Array.from({ length: maxAliases - 2 }, (_, index) => `a${index}: amount`).join(' ');
  // Spread over five selection sets: graphql-js gives up comparing one name repeated some 700 times in one.
  const draft = (pad: number) => {
    const [a, b, c, d, e] = [0, 1, 2, 3, 4].map((part) => padding(Math.floor(pad / 5) + (part < pad % 5 ? 1 : 0)));
    return `subscription { bonusCreated { id occurredAt cursor when: occurredAt${a} bonus { id celebration hashtag reason ${amounts}${b} giver { id displayName${c} } receivers { id${d} } } other: bonus { celebration${e} } } }`;
  };
  return draft(maxFields - measureOf(draft(0)).fields);
}

/** The gateway's limits, as a measure: what the two operations above reach. */
export const AT_GATEWAY_LIMITS: Measure = { depth: maxDepth, fields: maxFields, aliases: maxAliases, topFields: maxRootFields };

/**
 * The QA probe's documents, each valid-looking and each costing 300 to 550 ms to parse and validate
 * before the token bound: 20,000 trivial operations (one picked by name, or an unknown name),
 * 55,000 repeated `@skip`, 20,000 unused fragments. All far past the default token bounds.
 */
export const TOKEN_PROBES = {
  manyOperations: { query: manyOperations(20_000), operationName: 'Q19999' },
  manyOperationsUnknownName: { query: manyOperations(20_000), operationName: 'nope' },
  manyDirectives: { query: `{ __typename ${'@skip(if: false) '.repeat(55_000)}}` },
  manyUnusedFragments: { query: `{ __typename } ${Array.from({ length: 20_000 }, (_, index) => `fragment U${index} on Query { __typename }`).join('\n')}` },
};

/** `count` operations of one field each, five tokens apiece: `query Q<n> { __typename }`. */
export function manyOperations(count: number, kind: 'query' | 'subscription' = 'query', selection = '__typename'): string {
  return Array.from({ length: count }, (_, index) => `${kind} Q${index} { ${selection} }`).join('\n');
}

/**
 * The heaviest operation at all four of the gateway's limits a client plausibly writes: 1,000
 * fields with three arguments each (a literal and two variables), 100 of them aliased, 12 deep, 50
 * root fields. Its fields need not exist: what it measures is the tokens a parse must take.
 */
export function argumentsAtGatewayLimits(): string {
  let fields = 0;
  const field = (container = '') => {
    fields += 1;
    const alias = fields <= maxAliases ? `a${fields}: ` : '';
    return `${alias}f${fields}(format: "long", locale: $a, width: $b)${container}`;
  };
  let deep = field();
  for (let level = 1; level < maxDepth; level += 1) deep = field(` { ${deep} }`);
  // The other root fields share what is left of the field limit.
  const children = maxFields - maxDepth - (maxRootFields - 1);
  const roots = Array.from({ length: maxRootFields - 1 }, (_, root) => {
    const count = Math.floor(children / (maxRootFields - 1)) + (root < children % (maxRootFields - 1) ? 1 : 0);
    return field(` { ${Array.from({ length: count }, () => field()).join(' ')} }`);
  });
  return `query($a: String, $b: Int) { ${deep} ${roots.join(' ')} }`;
}
