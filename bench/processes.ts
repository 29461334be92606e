import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

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

/**
 * Starts one server as its own node process (not through npm or a tsx wrapper, so the pid is the
 * server's own and its /proc figures are the server's), and resolves once it prints its URL.
 */
export function launch({ name, entry, env, nodeFlags = [], readyTimeoutMs = 30_000, onOutput }: LaunchOptions): Promise<Child> {
  const child = spawn(process.execPath, [...RUNTIME_FLAGS, ...nodeFlags, '--import', 'tsx', '--import', EXIT_WITH_PARENT, entry], {
    cwd: REPO_ROOT,
    // Production defaults (no Sandbox, no introspection), as the graph is deployed.
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
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
      reject(new Error(`${name} (${entry}) ${reason}\n${tail.join('\n')}`));
    };
    const timer = setTimeout(() => fail(`printed no URL within ${readyTimeoutMs} ms`), readyTimeoutMs);
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => fail(`exited before listening (${signal ?? `code ${code}`})`));
    // Both streams are read to the end, so a chatty server never blocks on a full pipe.
    let inspectorUrl: string | undefined;
    createInterface({ input: child.stderr }).on('line', (line) => {
      remember(line);
      onOutput?.(`${line}\n`);
      inspectorUrl ??= INSPECTING.exec(line)?.[1];
    });
    const stdoutLines = createInterface({ input: child.stdout });
    stdoutLines.on('line', (line) => {
      remember(line);
      onOutput?.(`${line}\n`);
      const url = ready ? undefined : LISTENING.exec(line)?.[1];
      if (!url) return;
      ready = true;
      clearTimeout(timer);
      // Once listening, its stdout is the access log: splitting every line in this process, which
      // also runs the load, cost the clients' measured latency. Drained unread from here on.
      stdoutLines.close();
      child.stdout.on('data', onOutput ? (chunk: Buffer) => onOutput(chunk.toString('utf8')) : () => {}).resume();
      const pid = child.pid!;
      resolve({
        name,
        pid,
        url,
        peakRssBytes: () => (child.exitCode === null && child.signalCode === null ? readPeakRss(pid) : undefined),
        inspectorUrl: () => inspectorUrl,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(killer);
        },
        async kill(signal) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    });
  });
}
