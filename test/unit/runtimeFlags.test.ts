import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, RUNTIME_FLAGS } from '../../bench/processes.ts';

describe('runtime flags', () => {
  it('npm start runs with the V8 flags the benchmark measures', () => {
    const scripts = (JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const startFlags = scripts.start!.split(/\s+/).filter((word) => word.startsWith('--') && word !== '--import');
    expect(startFlags).toEqual([...RUNTIME_FLAGS]);
  });

  it('this node accepts every one of them', () => {
    // node refuses a misspelt V8 flag with "bad option" and exit code 9.
    expect(execFileSync(process.execPath, [...RUNTIME_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).toBe('ok');
  });
});
