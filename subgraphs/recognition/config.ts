import { readInt, readPort, readUrl, type Env } from '../../lib/config.ts';

export interface RecognitionConfig {
  port: number;
  host: string;
  /** The spec's `{base_url}`; the client adds `/api/v1`. */
  apiUrl: string;
  timeoutMs: number;
}

export const RECOGNITION_SUBGRAPH_PORT = 4001;
export const RECOGNITION_EMULATOR_PORT = 4101;

export function readRecognitionConfig(env: Env, overrides: Partial<RecognitionConfig> = {}): RecognitionConfig {
  const apiUrl = overrides.apiUrl ?? readUrl(env, 'RECOGNITION_API_URL') ?? `http://127.0.0.1:${readPort(env, 'RECOGNITION_EMULATOR_PORT', RECOGNITION_EMULATOR_PORT)}`;
  return {
    port: readPort(env, 'RECOGNITION_SUBGRAPH_PORT', RECOGNITION_SUBGRAPH_PORT),
    host: env.HOST ?? '127.0.0.1',
    timeoutMs: readInt(env, 'RECOGNITION_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    ...overrides,
    apiUrl,
  };
}
