// Preloaded into every process the benchmark launches. A SIGTERM leaves through a normal exit,
// which is when `--cpu-prof` writes its profile (death by the signal writes nothing). And stdin is
// a pipe from the benchmark: when it closes, the benchmark is gone, however it died, so go too
// rather than hold a port and a core.
process.once('SIGTERM', () => process.exit(0));
process.stdin.once('close', () => process.exit(0));
process.stdin.resume();
