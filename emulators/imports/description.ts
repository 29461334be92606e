import type { ImportOutcome } from './data.ts';

/** Largest description the emulator fetches; the rest is refused, not buffered. */
export const MAX_DESCRIPTION_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 5000;

const failed = (message: string): ImportOutcome => ({ status: 'failed', message });

async function readBounded(response: Response): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_DESCRIPTION_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Fetches the file the way the service does: a public GET, bounded in time and size. */
export async function fetchDescription(location: string): Promise<{ text: string } | ImportOutcome> {
  let response: Response;
  try {
    response = await fetch(location, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json, application/yaml, text/yaml, */*' } });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${FETCH_TIMEOUT_MS} ms` : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
    return failed(`Could not fetch the file at file_location: ${reason}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    return failed(`Could not fetch the file at file_location: it answered HTTP ${response.status}`);
  }
  const text = await readBounded(response);
  if (text === undefined) return failed(`The file at file_location is larger than ${MAX_DESCRIPTION_BYTES} bytes`);
  return { text };
}

function paths(document: Record<string, unknown>): number {
  const found = document.paths;
  return found && typeof found === 'object' ? Object.keys(found).length : 0;
}

/** True when the description says where its API lives: Swagger 2.0's `basePath`, or OpenAPI 3's `servers`. */
function namesBasePath(document: Record<string, unknown>): boolean {
  if (typeof document.basePath === 'string' && document.basePath.trim() !== '') return true;
  return Array.isArray(document.servers) && document.servers.length > 0;
}

/**
 * Parses a description for real: YAML or JSON, then validated by swagger-parser against the
 * Swagger 2.0 (or OpenAPI 3) schema, external references not followed (the emulator would
 * otherwise fetch whatever a file points at). Without an API version to overwrite, the
 * description must name its base path: the new version is made from it (the spec's rule).
 */
export async function importDescription(text: string, { apiVersionId, newVersionId }: { apiVersionId: string | null; newVersionId: string }): Promise<ImportOutcome> {
  // The parsers load on the first import, not when the emulator starts (every test and `npm start` start one).
  const [{ parse: parseYaml }, { default: SwaggerParser }] = await Promise.all([import('yaml'), import('@apidevtools/swagger-parser')]);
  let document: unknown;
  try {
    document = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    return failed(`The file is neither JSON nor YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!document || typeof document !== 'object' || Array.isArray(document)) return failed('The file is not a Swagger description: expected an object with "swagger": "2.0"');
  const record = document as Record<string, unknown>;
  if (record.swagger === undefined && record.openapi === undefined) return failed('The file is not a Swagger description: it has no "swagger" version field');
  try {
    await SwaggerParser.validate(structuredClone(record) as never, { resolve: { external: false } });
  } catch (error) {
    return failed(String((error as Error).message).trim());
  }
  if (!apiVersionId && !namesBasePath(record)) {
    return failed('The description names no base path, which a new API version is made from: add "basePath", or give api_version_id to overwrite an existing version');
  }
  const info = (record.info ?? {}) as Record<string, unknown>;
  const target = apiVersionId ? `version ${apiVersionId} (overwritten)` : `new version ${newVersionId}`;
  return { status: 'completed', message: `Imported ${paths(record)} paths of "${String(info.title ?? 'untitled')}" ${String(info.version ?? '')} into ${target}` };
}
