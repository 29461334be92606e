import { afterAll } from 'vitest';
import { closeLeftovers } from './afterFile.ts';

/**
 * After every end-to-end file, before its logs are checked (the last setup file's `afterAll` runs
 * first of theirs): what a test or a hook started through a helper is closed, not left to a worker
 * that runs other files next.
 */
afterAll(closeLeftovers);
