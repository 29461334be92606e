import { accessSync, constants } from 'node:fs';
import { basename, delimiter, join } from 'node:path';

/** How to install the programs some tests start themselves (.ci/run installs them). */
const INSTALL: Record<string, string> = {
  'redis-server': 'apt-get install -y redis-server',
  chromium: 'apt-get install -y chromium',
};

type Env = Readonly<Record<string, string | undefined>>;

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** A command on PATH, or a program by its path. */
const installed = (command: string, env: Env) => (command.includes('/') ? executable(command) : (env.PATH ?? '').split(delimiter).some((folder) => executable(join(folder, command))));

const inCi = (env: Env) => Boolean(env.CI) && !['0', 'false'].includes(env.CI!.toLowerCase());

/**
 * Whether a program the tests start (a command on PATH, or a path) is installed. Missing on a developer's machine, it is false
 * and says so loudly: the tests that need it skip (`describe.skipIf(!requireBinary(...))`). Missing
 * in CI (`CI` set), it throws, so those tests fail rather than pass unrun.
 */
export function requireBinary(command: string, env: Env = process.env): boolean {
  if (installed(command, env)) return true;
  const install = INSTALL[basename(command)] ?? `install ${command}`;
  if (inCi(env)) throw new Error(`${command} is not installed, and CI is set: the tests that need it must run. Run \`${install}\` (.ci/run does).`);
  const line = '!'.repeat(78);
  console.warn(`\n${line}\n!! ${command} is not installed: SKIPPING the tests that need it.\n!! Run \`${install}\` to run them; in CI (CI set) they fail instead.\n${line}\n`);
  return false;
}
