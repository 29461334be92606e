import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GATEWAY_RUNTIME_FLAGS, ONE_PROCESS_RUNTIME_FLAGS, REPO_ROOT, RUNTIME_FLAGS, runtimeFlagsOf } from '../../bench/processes.ts';

describe('runtime flags', () => {
  it('npm start and the one-process deployment run with the V8 flags the benchmark measures', () => {
    const scripts = (JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const flagsOf = (script: string) => script.split(/\s+/).filter((word) => word.startsWith('--') && word !== '--import');
    expect(flagsOf(scripts.start!)).toEqual([...RUNTIME_FLAGS]);
    expect(scripts['start:one-process']).toMatch(/ stack\/main\.ts$/);
    expect(flagsOf(scripts['start:one-process']!)).toEqual([...runtimeFlagsOf('stack/main.ts')]);
  });

  it('this node accepts every one of them', () => {
    // node refuses a misspelt V8 flag with "bad option" and exit code 9.
    for (const flags of [RUNTIME_FLAGS, GATEWAY_RUNTIME_FLAGS, ONE_PROCESS_RUNTIME_FLAGS]) expect(execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).toBe('ok');
  });

  it('the gateway and the reference proxy run with the same flags, every other server with the rest', () => {
    expect(runtimeFlagsOf('gateway/main.ts')).toEqual(runtimeFlagsOf('bench/twoHops/proxy.ts'));
    expect(runtimeFlagsOf('gateway/main.ts')).not.toEqual(RUNTIME_FLAGS);
    for (const entry of ['subgraphs/recognition/main.ts', 'emulators/recognition/main.ts', 'bench/twoHops/mapper.ts']) expect(runtimeFlagsOf(entry)).toEqual(RUNTIME_FLAGS);
  });
});
