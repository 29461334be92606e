import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVICES, envPrefix } from '../../lib/services.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

const documents = ['README.md', ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];

/** Folders a path in backticks may start with to be taken for a path in this repository. */
const TOP_LEVEL = readdirSync(root).filter((name) => name !== 'node_modules' && !name.startsWith('.git') && statSync(join(root, name)).isDirectory());
/** Written by a run, not committed. */
const OUTPUTS = ['bench/results/'];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');

function anchorsIn(text: string): Set<string> {
  const withoutCode = text.replace(/```[\s\S]*?```/g, '');
  return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

/** Prose only: fenced code holds commands and examples, not references. */
const prose = (text: string) => text.replace(/```[\s\S]*?```/g, '');

function deadReferences(document: string, text = read(document)): string[] {
  const here = dirname(join(root, document));
  const dead: string[] = [];
  const insideRepo = (target: string) => target === root || target.startsWith(root + sep);
  for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(https?:|mailto:)/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const file = path ? resolve(here, path) : join(root, document);
    if (!insideRepo(file) || !existsSync(file)) {
      dead.push(`${document}: link ${target}`);
      continue;
    }
    if (anchor && file.endsWith('.md') && !anchorsIn(readFileSync(file, 'utf8')).has(anchor)) dead.push(`${document}: anchor ${target}`);
  }
  for (const [, quoted] of prose(text).matchAll(/`([^`\s]+)`/g)) {
    const path = quoted!;
    const looksLikePath = path.startsWith('../') || (path.includes('/') && TOP_LEVEL.includes(path.split('/')[0]!));
    if (!looksLikePath || /[<>*{}…]/.test(path) || OUTPUTS.some((output) => path.startsWith(output))) continue;
    const file = resolve(root, path);
    if (!insideRepo(file) || !existsSync(file)) dead.push(`${document}: path \`${path}\``);
  }
  return dead;
}

describe('the documentation', () => {
  it('keeps the README short enough to read in five minutes', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('has no dead link, anchor or repository path in README.md or docs/', () => {
    expect(documents.length).toBeGreaterThan(3);
    expect(documents.flatMap((document) => deadReferences(document))).toEqual([]);
  });

  it('finds what is dead (the check can fail)', () => {
    const fake = [
      'See [the spec](../shared/specs/x.md), [gone](NOPE.md), [a section](EVENTS.md#no-such-section) and [one that is](EVENTS.md#scaling-out),',
      '`gateway/nope.ts`, `../shared/specs/x.md`, but not `gateway/server.ts`, `subgraphs/<service>/` or `bench/results/latest.json`.',
      '```sh\ncat gateway/also-nope.ts\n```',
    ].join('\n');
    expect(deadReferences('docs/FAKE.md', fake)).toEqual([
      'docs/FAKE.md: link ../shared/specs/x.md',
      'docs/FAKE.md: link NOPE.md',
      'docs/FAKE.md: anchor EVENTS.md#no-such-section',
      'docs/FAKE.md: path `gateway/nope.ts`',
      'docs/FAKE.md: path `../shared/specs/x.md`',
    ]);
    expect(anchorOf("The emulator's control surface")).toBe('the-emulators-control-surface');
  });
});

/** Settings the benchmark and the soak pass to their own child processes: not for operators. */
const INTERNAL = new Set(['TWO_HOPS_UPSTREAM', 'TWO_HOPS_MAPPER', 'TWO_HOPS_MARKETPLACE', 'BENCH_SUBSCRIBER_SETTINGS', 'PATH', 'SOAK_HEAP_PROBE_DIR']);

function settingsReadByCode(): Set<string> {
  const names = new Set<string>();
  const folders = ['bench', 'emulators', 'gateway', 'lib', 'scripts', 'stack', 'subgraphs', 'test/support'];
  for (const folder of folders) {
    for (const name of readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts') || name.includes('__generated__')) continue;
      const text = readFileSync(join(root, folder, name), 'utf8');
      // `env.NAME` read (not assigned), `readInt(env, 'NAME', …)` and the like, `env['NAME']`, the stack's `port('NAME', …)`.
      for (const match of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)\b(?!\s*=[^=])|\((?:process\.)?env,\s*'([A-Z][A-Z0-9_]+)'|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]|\bport\('([A-Z][A-Z0-9_]+)'/g)) {
        names.add((match[1] ?? match[2] ?? match[3] ?? match[4])!);
      }
      // A setting's name handed to a helper along with the environment: `bucket(env, rate, 'NAME')`.
      for (const line of text.split('\n').filter((candidate) => /\benv\b/.test(candidate))) {
        for (const match of line.matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) names.add(match[1]!);
      }
    }
  }
  for (const service of SERVICES) for (const name of Object.values(service.env)) names.add(name);
  return new Set([...names].filter((name) => !INTERNAL.has(name)));
}

function settingsInReadme(): Set<string> {
  const section = read('README.md').split('\n## Configuration\n')[1]!.split('\n## ')[0]!;
  const names = new Set<string>();
  // A row names one setting, or several that go together (`A`, `B`).
  for (const [, cell] of section.matchAll(/^\| (`[A-Z<][^|]*?`) \|/gm)) {
    for (const [, name] of cell!.matchAll(/`([A-Z<][A-Z0-9_<>]+)`/g)) {
      if (name!.startsWith('<SERVICE>_')) for (const service of SERVICES) names.add(name!.replace('<SERVICE>', envPrefix(service.name)));
      else names.add(name!);
    }
  }
  return names;
}

describe('the configuration table', () => {
  it('lists every setting the code reads, and nothing it does not', () => {
    const read = settingsReadByCode();
    const listed = settingsInReadme();
    expect(read.size).toBeGreaterThan(30);
    expect([...read].filter((name) => !listed.has(name)).sort()).toEqual([]);
    expect([...listed].filter((name) => !read.has(name)).sort()).toEqual([]);
  });
});
