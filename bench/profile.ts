import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Summarises a `.cpuprofile` (from `BENCH_CPU_PROF=dir npm run bench`) by self time: which
 * functions, files and packages the CPU was actually in, idle and GC shown apart.
 *
 *   node --import tsx bench/profile.ts /tmp/prof/gateway/CPU.<...>.cpuprofile [rows] [last seconds]
 *
 * `last seconds` keeps only the samples of the profile's last seconds: start-up and warm-up
 * otherwise dominate a profile of a few seconds of load.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds on a monotonic clock, as is `endTime`. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, rowsArg, lastArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx bench/profile.ts <file.cpuprofile> [rows] [last seconds]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 25);
// Piped into `head`, stop quietly when the reader has had enough.
process.stdout.on('error', () => process.exit(0));
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

/** `node_modules/@apollo/gateway/dist/x.js` -> `@apollo/gateway`; our sources stay files. */
function packageOf(url: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1]!;
  if (url.startsWith('node:')) return 'node (core)';
  if (!url) return '(native/vm)';
  return url.replace(/^file:\/\//, '').replace(/^.*?\/(gateway|subgraphs|lib|emulators|bench)\//, '$1/');
}

const selfUs = { function: new Map<string, number>(), file: new Map<string, number>(), package: new Map<string, number>() };
let totalUs = 0;
let idleUs = 0;
const fromUs = lastArg ? profile.endTime - Number(lastArg) * 1e6 : 0;
let clockUs = profile.startTime;
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
profile.samples.forEach((id, index) => {
  const us = profile.timeDeltas[index] ?? 0;
  clockUs += us;
  if (clockUs < fromUs) return;
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  totalUs += us;
  const where = url ? `${basename(url)}:${lineNumber + 1}` : '';
  if (functionName === '(idle)') {
    idleUs += us;
    return;
  }
  add(selfUs.function, `${functionName || '(anonymous)'} ${where}`.trim(), us);
  add(selfUs.file, url ? packageOf(url) + (url.includes('node_modules') ? `/${basename(url)}` : '') : functionName, us);
  add(selfUs.package, url ? packageOf(url) : functionName, us);
});

const busyUs = totalUs - idleUs;
console.log(`${basename(file)}: ${(totalUs / 1e6).toFixed(1)} s sampled, ${(busyUs / 1e6).toFixed(1)} s busy (percentages are of busy time)`);
for (const [title, map] of Object.entries(selfUs)) {
  console.log(`\nself time by ${title}`);
  const top = [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, rows);
  for (const [key, us] of top) console.log(`${((100 * us) / busyUs).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
}
