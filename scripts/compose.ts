import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { parse } from 'graphql';
import { composeServices } from '@apollo/composition';
import { SERVICES, defaultSubgraphUrl } from '../lib/services.ts';

/**
 * Composes schema/<subgraph>.graphql into schema/supergraph.graphql. With --check, fails when the
 * committed supergraph differs from what composition produces now.
 */
const root = new URL('../schema/', import.meta.url);
const target = new URL('supergraph.graphql', root);

const result = composeServices(
  SERVICES.map((service) => ({
    name: service.name,
    url: defaultSubgraphUrl(service),
    typeDefs: parse(readFileSync(new URL(`${service.name}.graphql`, root), 'utf8')),
  })),
);
if (result.errors) {
  for (const error of result.errors) console.error(error.message);
  process.exit(1);
}
const sdl = `${result.supergraphSdl.trimEnd()}\n`;

if (process.argv.includes('--check')) {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
  if (current !== sdl) {
    console.error('schema/supergraph.graphql is stale: run `npm run compose` and commit the result.');
    process.exit(1);
  }
  console.log('supergraph is fresh');
} else {
  writeFileSync(target, sdl);
  console.log(`composed ${SERVICES.length} subgraphs into schema/supergraph.graphql`);
  for (const hint of result.hints ?? []) console.log(`hint: ${hint.toString()}`);
}
