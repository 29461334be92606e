import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * graphql 16 ships CommonJS and ESM builds. Node (and so Apollo, and `npm start`) loads the
 * CommonJS one; Vite would pick the ESM one for our sources, giving two `GraphQLError` classes
 * in one process. Pin ours to the build Node uses.
 */
const resolve = { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] };

/**
 * End-to-end files run last, one at a time, each in a process of its own (as every file ran before):
 * two watch the whole process (everything written to stderr, every `crypto.createHmac` call); one
 * needs the CPU within a 600 ms window, and failed twice beside another file; one starts two whole
 * graphs in processes of their own and gives them 30 s, which they missed beside the other files'
 * processes; the benchmark keeps both cores busy for a minute, which would starve anything beside it.
 */
const ALONE = [
  'test/e2e/ws-client-errors-quiet.test.ts',
  'test/e2e/pacing-caller-key.test.ts',
  'test/e2e/caller-connection-share.test.ts',
  'test/e2e/one-process.test.ts',
  'test/e2e/bench.test.ts',
];

const e2e = {
  // The last one's afterAll runs first: what a test left open is closed before the logs are checked.
  setupFiles: ['test/support/noSecretsInLogs.ts', 'test/support/wellFormedLogs.ts', 'test/support/closeLeftovers.ts'],
  testTimeout: 20_000,
  hookTimeout: 30_000,
};

export default defineConfig({
  resolve,
  test: {
    // vitest's default on 2 CPUs is one worker (availableParallelism - 1), one file at a time; an
    // end-to-end file spends most of its time waiting on servers, timers and child processes.
    maxWorkers: 2,
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Files share their worker's modules: each one re-importing Apollo, the gateway and the subgraphs cost more than its tests.
          isolate: false,
          // The property tests run a fixed count of cases (1-2 s here); a busy machine must not fail them on time.
          testTimeout: 20_000,
        },
      },
      {
        resolve,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: ALONE,
          // As in unit. Each file starts its own servers on port 0 and closes them (test/support/afterFile.ts);
          // the setup files start each file's captured logs afresh (test/support/noSecretsInLogs.ts).
          isolate: false,
          ...e2e,
        },
      },
      {
        resolve,
        // `--project 'e2e*'` runs both end-to-end projects.
        test: { name: 'e2e-alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 }, ...e2e },
      },
    ],
  },
});
