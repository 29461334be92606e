import type { IncomingMessage } from 'node:http';
import type { RestTransport } from '../kit/transport.ts';
import { CREDENTIAL_HEADER, createRecognitionClient, type RecognitionClient } from './client.ts';
import { createLoaders, type RecognitionLoaders } from './loaders.ts';

export interface RecognitionContext {
  client: RecognitionClient;
  loaders: RecognitionLoaders;
}

/** One request's context: the caller's credential bound into a client, and fresh loaders over it. */
export function makeContext(transport: RestTransport, headers: IncomingMessage['headers']): RecognitionContext {
  const raw = headers[CREDENTIAL_HEADER];
  const token = (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined;
  const client = createRecognitionClient({ transport, token });
  return { client, loaders: createLoaders(client) };
}
