import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_CREDENTIAL_HEADERS, SERVICES, envPrefix } from '../../lib/services.ts';
import { SERVICES as STACK_SERVICES } from '../../stack/services.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The relative modules a file imports or re-exports, type-only ones included, as absolute paths. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s+'(\.[^']+)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => resolve(dirname(file), specifier));
}

/** Every import cycle of a graph of modules, each written from where the search entered it. */
function cyclesIn(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of edges.get(file) ?? []) visit(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of edges.keys()) visit(file, []);
  return cycles;
}

describe('module boundaries', () => {
  it('keeps the gateway off the subgraphs: what they share is in lib/', () => {
    const offenders = sourcesUnder('gateway').flatMap((file) =>
      relativeImports(file)
        .filter((target) => relative(root, target).startsWith(`subgraphs/`))
        .map((target) => `${relative(root, file)} imports ${relative(root, target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it('has no import cycle inside the gateway, type-only imports included', () => {
    const files = sourcesUnder('gateway');
    const edges = new Map(files.map((file) => [relative(root, file), relativeImports(file).filter((target) => files.includes(target)).map((target) => relative(root, target))]));
    expect(cyclesIn(edges)).toEqual([]);
  });

  it('would see an import of subgraphs/ or a cycle (the checks can fail)', () => {
    expect(relativeImports(join(root, 'stack/services.ts')).some((target) => relative(root, target).startsWith('subgraphs/'))).toBe(true);
    const cycle = new Map([
      ['server.ts', ['passThrough.ts']],
      ['passThrough.ts', ['singleFetch.ts']],
      ['singleFetch.ts', ['server.ts', 'planner.ts']],
      ['planner.ts', []],
    ]);
    expect(cyclesIn(cycle)).toEqual(['server.ts -> passThrough.ts -> singleFetch.ts -> server.ts']);
  });
});

describe('service registry', () => {
  it('gives every service its own name, ports, settings and credential headers', () => {
    const unique = (values: readonly unknown[]) => expect(new Set(values).size).toBe(values.length);
    unique(SERVICES.map((service) => service.name));
    unique([4000, ...SERVICES.flatMap((service) => [service.subgraphPort, service.emulatorPort])]);
    unique(SERVICES.map((service) => envPrefix(service.name)));
    unique(ALL_CREDENTIAL_HEADERS);
    for (const header of ALL_CREDENTIAL_HEADERS) expect(header).toBe(header.toLowerCase());
  });

  it('names settings after the service in upper snake case', () => {
    expect(envPrefix('gatewayAdmin')).toBe('GATEWAY_ADMIN');
    expect(SERVICES.find((service) => service.name === 'recognition')?.env).toEqual({
      apiUrl: 'RECOGNITION_API_URL',
      subgraphPort: 'RECOGNITION_SUBGRAPH_PORT',
      emulatorPort: 'RECOGNITION_EMULATOR_PORT',
      subgraphUrl: 'RECOGNITION_SUBGRAPH_URL',
      timeout: 'RECOGNITION_TIMEOUT_MS',
      maxResponseBytes: 'RECOGNITION_MAX_RESPONSE_BYTES',
      connectionsPerCaller: 'RECOGNITION_CONNECTIONS_PER_CALLER',
      maxWaitingPerCaller: 'RECOGNITION_MAX_WAITING_PER_CALLER',
    });
  });

  it('has a schema, code and a stack entry for every registered service, and nothing else', () => {
    for (const service of SERVICES) {
      expect(existsSync(join(root, 'schema', `${service.name}.graphql`)), `schema/${service.name}.graphql`).toBe(true);
      expect(existsSync(join(root, 'subgraphs', service.name, 'main.ts')), `subgraphs/${service.name}/main.ts`).toBe(true);
      expect(existsSync(join(root, 'emulators', service.name, 'main.ts')), `emulators/${service.name}/main.ts`).toBe(true);
    }
    expect(STACK_SERVICES.map((service) => service.name)).toEqual(SERVICES.map((service) => service.name));
    for (const service of STACK_SERVICES) {
      // A demo credential travels in the service's own headers, which the gateway forwards.
      for (const header of Object.keys(service.demoHeaders)) expect(Object.values(service.credentialHeaders)).toContain(header);
    }
  });
});
