import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { followFile } from './followFile.ts';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * V8 flags every launched server gets, the same as `npm start` (a unit test holds the two
 * together). A larger young generation lets the many short-lived objects of a GraphQL request die
 * in scavenges instead of being promoted. But V8 starts an old-generation collection whenever the
 * room left under the old generation's limit is smaller than the young generation, and a
 * subgraph's first limit (about 63 MiB over 25 MiB live) leaves less than 64 MiB: it ran a
 * mark-compact every 0.1 to 0.6 s under steady load. Starting the old generation at 128 MiB gives
 * it that room from the start.
 */
export const RUNTIME_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--initial-old-space-size=128'];

/**
 * The gateway's, where it runs alone: a young generation half as large. Its old generation holds
 * some 68 MiB live (the supergraph, its plans, Apollo), so at 64 MiB semi-spaces the room left
 * under the limit is smaller than what a scavenge could promote, and under load V8 started
 * mark-compacts several times a second (docs/PERFORMANCE.md, "Runtime flags").
 */
export const GATEWAY_RUNTIME_FLAGS: readonly string[] = ['--max-semi-space-size=32', '--initial-old-space-size=128'];
/** The gateway, and the hand-written reference's first hop, which forwards answers as the gateway does. */
const GATEWAY_ENTRIES = new Set(['gateway/main.ts', 'bench/twoHops/proxy.ts']);

/**
 * The one-process deployment's (`npm run start:one-process`, a unit test holds the two together):
 * the gateway's young generation, for the gateway's reason, and room for the subgraphs' old
 * generations beside the gateway's. At concurrency 32 on `rewardCatalog` (two runs on a busy
 * machine, rotating rounds), the one process spent 1,554 µs of CPU a request with a subgraph's
 * flags, 1,216-1,219 with the gateway's young generation, and 989 with these.
 */
export const ONE_PROCESS_RUNTIME_FLAGS: readonly string[] = ['--max-semi-space-size=32', '--initial-old-space-size=512'];

/** The V8 flags of the process that runs `entry`. */
export const runtimeFlagsOf = (entry: string): readonly string[] => (GATEWAY_ENTRIES.has(entry) ? GATEWAY_RUNTIME_FLAGS : entry === 'stack/main.ts' ? ONE_PROCESS_RUNTIME_FLAGS : RUNTIME_FLAGS);

export interface LaunchOptions {
  /** Shown in the report, such as `recognition-subgraph`. */
  name: string;
  /** Entry file relative to the repository, such as `gateway/main.ts`. */
  entry: string;
  env: Record<string, string>;
  /** Extra node flags (profiling). */
  nodeFlags?: readonly string[];
  /** @default 30000 */
  readyTimeoutMs?: number;
  /** Everything the process writes on stdout and stderr, as it comes (a test scans it for credentials); unread by default. */
  onOutput?: (text: string) => void;
}

export interface Child {
  name: string;
  pid: number;
  /** The URL the process printed once listening. */
  url: string;
  /** Peak resident set size so far (VmHWM), in bytes; undefined once it has exited. */
  peakRssBytes(): number | undefined;
  /** The inspector's WebSocket URL, when the process was started with `--inspect`. */
  inspectorUrl(): string | undefined;
  stop(): Promise<void>;
  /** Sends a signal (SIGKILL: a crash) and resolves once the process is gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** A `main.ts` announces where it listens in one plain line (`... on http://host:port/...`); JSON lines are logs. */
const LISTENING = /^[^{].*? on (https?:\/\/[^\s)]+)/;
/** What node prints on stderr with `--inspect`. */
const INSPECTING = /^Debugger listening on (ws:\/\/\S+)/;
const EXIT_WITH_PARENT = new URL('./exitWithParent.ts', import.meta.url).href;

function readPeakRss(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time a process has used so far, user and system, in ms: utime and stime of /proc/<pid>/stat,
 * counted in ticks of 10 ms. The name in that line may hold spaces: the fields are read after its `)`.
 */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

let outputDirectory: string | undefined;
let launched = 0;

/**
 * Starts one server as its own node process (not through npm or a tsx wrapper, so the pid is the
 * server's own and its /proc figures are the server's), and resolves once it prints its URL.
 *
 * Its stdout, the access log once it listens, goes to a file that this process reads only until
 * then (or to the end, for `onOutput`), not to a pipe this process drains: the load runs here, and
 * draining the gateway's access log here charged its batches to the load client (6-8 µs of CPU and
 * one wakeup per operation in three at concurrency 32), which a deployment's log collector, a
 * process of its own, does not. The file is removed once the process is stopped.
 */
export function launch({ name, entry, env, nodeFlags = [], readyTimeoutMs = 30_000, onOutput }: LaunchOptions): Promise<Child> {
  if (!outputDirectory) {
    const directory = (outputDirectory = mkdtempSync(join(tmpdir(), 'graph-servers-')));
    // Left behind only if a process failed to start: its output is the diagnosis.
    process.once('exit', () => {
      try {
        rmdirSync(directory);
      } catch {}
    });
  }
  const outputPath = join(outputDirectory, `${name}-${++launched}.log`);
  const stdoutFd = openSync(outputPath, 'w');
  const child = spawn(process.execPath, [...runtimeFlagsOf(entry), ...nodeFlags, '--import', 'tsx', '--import', EXIT_WITH_PARENT, entry], {
    cwd: REPO_ROOT,
    // Production defaults (no Sandbox, no introspection), as the graph is deployed.
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['pipe', stdoutFd, 'pipe'],
  });
  closeSync(stdoutFd);
  const tail: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    if (tail.length > 20) tail.shift();
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return new Promise<Child>((resolve, reject) => {
    let ready = false;
    const fail = (reason: string) => {
      if (ready) return;
      ready = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      // What it wrote last explains most failures: read to the end first. The file stays.
      void stdout.stop().then(() => reject(new Error(`${name} (${entry}) ${reason} (stdout in ${outputPath})\n${tail.join('\n')}`)));
    };
    const timer = setTimeout(() => fail(`printed no URL within ${readyTimeoutMs} ms`), readyTimeoutMs);
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => fail(`exited before listening (${signal ?? `code ${code}`})`));
    // Stderr is read to the end, so a chatty server never blocks on a full pipe.
    let inspectorUrl: string | undefined;
    createInterface({ input: child.stderr! }).on('line', (line) => {
      remember(line);
      onOutput?.(`${line}\n`);
      inspectorUrl ??= INSPECTING.exec(line)?.[1];
    });
    let partial = '';
    const stdout = followFile(outputPath, (text) => {
      if (ready) return onOutput?.(text);
      onOutput?.(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        remember(line);
        const url = ready ? undefined : LISTENING.exec(line)?.[1];
        if (url) listening(url);
      }
    });
    const finish = async () => {
      await stdout.stop();
      rmSync(outputPath, { force: true });
    };

    function listening(url: string) {
      ready = true;
      clearTimeout(timer);
      // Once listening, its stdout is the access log: read on only for a caller that asked.
      if (!onOutput) void stdout.stop();
      const pid = child.pid!;
      resolve({
        name,
        pid,
        url,
        peakRssBytes: () => (child.exitCode === null && child.signalCode === null ? readPeakRss(pid) : undefined),
        inspectorUrl: () => inspectorUrl,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(killer);
          }
          await finish();
        },
        async kill(signal) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
          await finish();
        },
      });
    }
  });
}
