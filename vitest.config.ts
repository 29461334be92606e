import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * graphql 16 ships CommonJS and ESM builds. Node (and so Apollo, and `npm start`) loads the
 * CommonJS one; Vite would pick the ESM one for our sources, giving two `GraphQLError` classes
 * in one process. Pin ours to the build Node uses.
 */
const resolve = { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] };

export default defineConfig({
  resolve,
  test: {
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // The property tests run a fixed count of cases (1-2 s here); a busy machine must not fail them on time.
          testTimeout: 20_000,
        },
      },
      {
        resolve,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          setupFiles: ['test/support/noSecretsInLogs.ts', 'test/support/wellFormedLogs.ts'],
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
