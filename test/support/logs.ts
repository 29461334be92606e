import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../lib/logger.ts';

/** Every line every server logged in this test file, at debug level: the redaction test reads it. */
export const capturedLogs: string[] = [];

/** Secrets used in this test file; none may appear in `capturedLogs`. */
export const knownSecrets = new Set<string>();

const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    capturedLogs.push(chunk.toString('utf8'));
    done();
  },
});

export function testLogger(name = 'test'): Logger {
  return createLogger({ name, level: 'debug', destination: sink });
}
