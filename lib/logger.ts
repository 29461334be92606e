import { pino, type DestinationStream, type Logger } from 'pino';
import { ALL_CREDENTIAL_HEADERS } from './services.ts';
import { readLogLevel } from './config.ts';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** Process or component name, first field of every line. */
  name: string;
  /** @default process.env.LOG_LEVEL ?? 'info' */
  level?: string;
  /** Where lines go. @default stdout */
  destination?: DestinationStream;
}

/**
 * Header values and URLs are logged only through the redaction helpers; these paths are
 * a second line of defence for an object that reaches the logger whole.
 */
const REDACT_PATHS = [
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  ...ALL_CREDENTIAL_HEADERS.map((header) => `*.headers["${header}"]`),
  // The dashboards service's own header, which its client sends upstream.
  '*.headers["service-token"]',
  // What the messaging service's login answers and is sent.
  'apiKey',
  'password',
  // The imports service's key travels as the query parameter `apikey`: an object carrying it by that name.
  'apikey',
  'token',
  'accessToken',
  'secret',
  'clientSecret',
  'client_secret',
  'provisionKey',
  'provision_key',
];

/** What stdout may hold unwritten before lines are dropped. */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** The longest a logged line waits in the stdout buffer. */
const FLUSH_EVERY_MS = 250;

export function createLogger({ name, level = readLogLevel(process.env, 'info'), destination }: LoggerOptions): Logger {
  const options = { name, level, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } };
  if (destination) return pino(options, destination);
  // Stdout is written in batches of 16 KiB, not a system call per line. Each batch is a write on
  // libuv's thread pool and wakes whoever reads the pipe: with the access log's line per operation,
  // synchronous writes cost the gateway 1-2 ms of p50 at concurrency 1 on the benchmark, and 4 KiB
  // batches (one per 13 operations) still cost it 5-13 µs of CPU per operation at concurrency 32.
  // A quiet process would hold a lone warning until 16 KiB followed it (a breaker opening could go
  // unseen for hours): what is buffered also goes out within FLUSH_EVERY_MS, and pino flushes the
  // rest when the process exits.
  //
  // Lines are handed over as bytes: given strings, sonic-boom appends each to its pending string and
  // measures that whole string's UTF-8 length again (up to `maxWrite`), which made writing the
  // access log 7% of the gateway's CPU at concurrency 32. Given buffers, it keeps a list and a count.
  //
  // A reader of stdout that stops reading (a stuck log collector) must not grow the buffer without
  // end: past MAX_BUFFERED_BYTES lines are dropped, and counted, until it reads again.
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 16 * 1024, maxWrite: 64 * 1024, maxLength: MAX_BUFFERED_BYTES, contentMode: 'buffer' });
  let dropped = 0;
  stdout.on('drop', () => {
    dropped += 1;
  });
  setInterval(() => {
    stdout.flush();
    if (dropped === 0) return;
    const count = dropped;
    dropped = 0;
    logger.warn({ dropped: count }, 'log lines dropped: stdout was not read');
    // Still no room, the notice itself dropped: told with the next.
    if (dropped > 0) dropped += count - 1;
  }, FLUSH_EVERY_MS).unref();
  // sonic-boom's types know only its string mode.
  const bytes = stdout as unknown as { write(data: Buffer): boolean };
  let collected: string[] | undefined;
  const lines: DestinationStream & Together = {
    write(line) {
      if (collected) collected.push(line);
      else bytes.write(Buffer.from(line));
    },
    [TOGETHER](run) {
      if (collected) return run();
      collected = [];
      try {
        run();
      } finally {
        const text = collected.join('');
        collected = undefined;
        if (text) bytes.write(Buffer.from(text));
      }
    },
  };
  const logger = pino(options, lines);
  return logger;
}

const TOGETHER = Symbol('together');
interface Together {
  [TOGETHER](run: () => void): void;
}

/**
 * Runs `run`, the lines it logs to stdout encoded into one buffer: a buffer for each line of the
 * access log was another 3% of the gateway's CPU. Synchronous, so no line waits for a later turn
 * (nor is lost to an exit). Any other destination gets the lines one by one, as always.
 */
export function writeTogether(logger: Logger, run: () => void): void {
  const stream = (logger as unknown as Record<symbol, Partial<Together> | undefined>)[pino.symbols.streamSym];
  const together = stream?.[TOGETHER];
  if (together) together.call(stream, run);
  else run();
}

type PinoInternals = Record<symbol, unknown>;

/**
 * Writes info lines of plain data with `msg` as pino writes them (its level, time, bindings, the
 * fields in order, the message last), the fields encoded by one `JSON.stringify`: pino's
 * serialiser, which visits each field for serializers and redaction, was 2-3% of the gateway's CPU
 * for the access log's line per operation. Only for fields that are plain JSON data and need no
 * redaction (no credential, no error object); the caller checks the level.
 */
export function plainInfoLines(logger: Logger, msg: string): (fields: object) => void {
  const internals = logger as unknown as PinoInternals;
  const { symbols } = pino;
  const level = (internals[symbols.lsCacheSym] as Record<number, string>)[logger.levels.values.info!]!;
  const time = internals[symbols.timeSym] as () => string;
  const chindings = internals[symbols.chindingsSym] as string;
  const end = `,${JSON.stringify(internals[symbols.messageKeySym])}:${JSON.stringify(msg)}${internals[symbols.endSym] as string}`;
  const stream = internals[symbols.streamSym] as DestinationStream;
  return (fields) => {
    const json = JSON.stringify(fields);
    stream.write(`${level}${time()}${chindings}${json.length > 2 ? `,${json.slice(1, -1)}` : ''}${end}`);
  };
}

/** Apollo's logger interface over pino: Apollo passes pre-formatted strings. */
export function apolloLogger(logger: Logger) {
  return {
    debug: (message: unknown) => logger.debug(String(message)),
    info: (message: unknown) => logger.info(String(message)),
    warn: (message: unknown) => logger.warn(String(message)),
    error: (message: unknown) => logger.error(String(message)),
  };
}
