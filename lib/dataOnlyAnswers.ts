/**
 * Set by a subgraph on an answer it wrote itself as `{"data":…}` and nothing else: no `errors`,
 * no `extensions`. The gateway passes such an answer on to the client without searching its bytes
 * for an `extensions` key, a search that grows with the answer (11 µs for 35 KB, 20 for 70 KB).
 * An answer without it is searched: it may come from Apollo Server, whose plugins may add
 * extensions.
 */
export const DATA_ONLY_HEADER = 'x-graph-data-only';
