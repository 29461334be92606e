import { spawn, type ChildProcess } from 'node:child_process';
import { capturedLogs } from './logs.ts';

const root = new URL('../../', import.meta.url).pathname;

export interface SpawnedMain {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
}

/**
 * A main as its own node process from the repository's root (`nodeArgs` end with its entry); what it
 * prints is searched for credentials after the file, as every server's log is.
 */
export function spawnMain(nodeArgs: readonly string[], env: NodeJS.ProcessEnv): SpawnedMain {
  const child = spawn(process.execPath, nodeArgs, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const capture = (chunk: Buffer) => {
    output += chunk.toString();
    capturedLogs.push(chunk.toString());
  };
  child.stdout!.on('data', capture);
  child.stderr!.on('data', capture);
  return { child, output: () => output };
}
