/**
 * The subgraphs the gateway composes, and which of the caller's headers each may see.
 * A credential header listed here travels to its own subgraph and to no other.
 */
export interface SubgraphEntry {
  name: string;
  /** Port of `npm start`'s instance; `<NAME>_SUBGRAPH_URL` overrides the whole URL. */
  defaultPort: number;
  credentialHeaders: readonly string[];
}

export const SUBGRAPHS: readonly SubgraphEntry[] = [
  { name: 'recognition', defaultPort: 4001, credentialHeaders: ['x-recognition-token'] },
  {
    name: 'marketplace',
    defaultPort: 4002,
    credentialHeaders: ['x-marketplace-email', 'x-marketplace-api-key', 'x-marketplace-account-key', 'x-marketplace-user-token'],
  },
  { name: 'dashboards', defaultPort: 4003, credentialHeaders: ['x-dashboards-token'] },
  { name: 'imports', defaultPort: 4005, credentialHeaders: ['x-imports-apikey'] },
];

export const subgraphUrlEnv = (name: string) => `${name.toUpperCase().replace(/-/g, '_')}_SUBGRAPH_URL`;
export const defaultSubgraphUrl = (entry: SubgraphEntry) => `http://127.0.0.1:${entry.defaultPort}/graphql`;
