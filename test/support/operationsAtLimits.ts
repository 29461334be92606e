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
