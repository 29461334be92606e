import { z } from 'zod';
import { GraphQLError } from 'graphql';
import type { Logger } from '../../lib/logger.ts';
import { WriteOutcome } from '../../lib/errors.ts';
import { appliedButUnread, ErrorCode, graphError, missingCredential, upstreamContractError } from '../kit/errors.ts';
import type { RestCall, RestResponse, RestTransport } from '../kit/transport.ts';
import { restPath } from '../kit/paths.ts';
import { identifier, listOf } from '../kit/shapes.ts';
import { isFinalStatus } from './enums.ts';

/** The gateway header that carries a caller's import service API key. */
export const CREDENTIAL_HEADER = 'x-imports-apikey';
const SERVICE = 'imports';
/** The spec versions the service in its path: `{import_url}/v1`. */
export const API_VERSION_PATH = '/v1';

export interface ImportDto {
  id: string;
  /** The import type (`swagger`). */
  type: string | null;
  /** The status as the service wrote it; the graph's `status` enum is read from it. */
  statusText: string;
  message: string | null;
}

export interface CreateImportRequest {
  apiId: string;
  /** An absolute http(s) URL, checked by the caller; sent URL-encoded once, as every query value. */
  fileLocation: string;
  apiVersionId?: string | null;
}

export const isFinal = (dto: Pick<ImportDto, 'statusText'>) => isFinalStatus(dto.statusText);

// Shapes of the service's 2xx answers, checked at the boundary: anything else is UPSTREAM_ERROR.
// An id goes back in a path, and into errors: one no path segment may hold is no id.
const Id = identifier;
const Message = z
  .union([z.string(), listOf(z.string())])
  .nullish()
  .transform((value) => (Array.isArray(value) ? value.join('\n') : (value ?? null)));
const PlainImport = z.object({ id: Id, type: z.string().nullish(), import_type: z.string().nullish(), status: z.string().min(1), message: Message });
/** The JSON:API form the vendor's other answers take: `{data: {type, id, attributes}}`. */
const JsonApiImport = z.object({
  data: z.object({ id: Id, type: z.string().nullish(), attributes: z.object({ import_type: z.string().nullish(), type: z.string().nullish(), status: z.string().min(1), message: Message }) }),
});
const Link = z.object({ id: Id, type: z.string().nullish(), links: z.object({ self: z.string().min(1) }) });
const LinkAnswer = z.union([Link, z.object({ data: Link })]);

/** An import from either form of answer; undefined when the body is neither. */
export function toImport(body: unknown): ImportDto | undefined {
  const jsonApi = JsonApiImport.safeParse(body);
  if (jsonApi.success) {
    const { id, attributes } = jsonApi.data.data;
    return { id, type: attributes.import_type ?? attributes.type ?? null, statusText: attributes.status, message: attributes.message };
  }
  const plain = PlainImport.safeParse(body);
  if (!plain.success) return undefined;
  const { id, type, import_type: importType, status, message } = plain.data;
  return { id, type: type ?? importType ?? null, statusText: status, message };
}

function importOf(response: RestResponse): ImportDto {
  const dto = toImport(response.body);
  if (!dto) throw upstreamContractError(SERVICE, 'the answer is not an import (expected {id, status, message})', response.status);
  return dto;
}

/** GraphQL argument paths of the service's query parameters, for errors that name one. */
const ARGUMENTS: Readonly<Record<string, string>> = {
  api_id: 'input.apiId',
  file_location: 'input.fileLocation',
  api_version_id: 'input.apiVersionId',
};

/** Names the caller's argument in a refusal that names the service's parameter. */
function withArgument(error: unknown): unknown {
  if (!(error instanceof GraphQLError) || !error.extensions.fieldErrors?.length) return error;
  const fieldErrors = error.extensions.fieldErrors.map((entry) => ({ ...entry, field: ARGUMENTS[entry.field] ?? entry.field }));
  const argument = fieldErrors.length === 1 ? fieldErrors[0]!.field : undefined;
  return new GraphQLError(error.message, { extensions: { ...error.extensions, fieldErrors, ...(argument?.startsWith('input.') ? { argument } : {}) } });
}

export interface ImportsClient {
  /**
   * Starts an import and reads it once through the link the service answers with. When only the
   * read fails, the error is the read's with `writeOutcome: APPLIED` and the import's id (`appliedButUnread`).
   */
  createImport(request: CreateImportRequest): Promise<ImportDto>;
  /** Null when the service knows no such import for this key. */
  getImport(id: string): Promise<ImportDto | null>;
}

export interface ImportsClientOptions {
  transport: RestTransport;
  /** The transport's base URL (`{import_url}/v1`): links the service hands out are followed only below it. */
  baseUrl: string;
  apikey: string | undefined;
  logger?: Logger;
}

const importPath = (id: string) => restPath('/imports/:id', { id });

/**
 * The path below the base URL that a `links.self` points at, when it points below the base URL.
 * A link elsewhere is never followed: the API key travels in the URL and must not leave for
 * another host. Any query the link carries is dropped (the key is added as for every call).
 */
export function linkPath(self: string, baseUrl: string): string | undefined {
  let base: URL;
  let target: URL;
  try {
    base = new URL(baseUrl);
    target = new URL(self, `${baseUrl.replace(/\/+$/, '')}/`);
  } catch {
    return undefined;
  }
  const prefix = base.pathname.replace(/\/+$/, '');
  if (target.origin !== base.origin || !target.pathname.startsWith(`${prefix}/imports/`)) return undefined;
  return target.pathname.slice(prefix.length);
}

/**
 * Every endpoint of the import service, called from here and nowhere else. The API key travels as
 * the `apikey` query parameter (the only scheme the service has): it is passed to the transport
 * as a secret, so it is scrubbed from anything reported, and the transport logs no URL.
 */
export function createImportsClient({ transport, baseUrl, apikey, logger }: ImportsClientOptions): ImportsClient {
  function call(method: RestCall['method'], operation: string, path: string, query: Record<string, string | undefined> = {}): RestCall {
    if (!apikey) throw missingCredential(SERVICE, CREDENTIAL_HEADER);
    return { operation, method, path, query: { apikey, ...query }, secrets: [apikey] };
  }

  return {
    async createImport({ apiId, fileLocation, apiVersionId }) {
      let response: RestResponse;
      try {
        response = await transport.request(
          call('POST', 'createImport', '/imports', { api_id: apiId, import_type: 'swagger', file_location: fileLocation, api_version_id: apiVersionId ?? undefined }),
        );
      } catch (error) {
        throw withArgument(error);
      }
      const link = LinkAnswer.safeParse(response.body);
      if (!link.success) {
        // Liberal in what we accept: an answer that is the import itself needs no second read.
        const answered = toImport(response.body);
        if (answered) return answered;
        // A 2xx: the job exists and runs, though no id can be read to follow it. Told only "failed",
        // a client would start a second one.
        throw graphError(
          `${SERVICE}: the service started the import, but its id could not be read from its answer (HTTP ${response.status}, not a link: expected {type, id, links.self}). Do not send the mutation again: it would start a second import.`,
          { code: ErrorCode.UpstreamError, service: SERVICE, status: response.status, writeOutcome: WriteOutcome.Applied },
        );
      }
      const { id, links } = 'data' in link.data ? link.data.data : link.data;
      try {
        const path = linkPath(links.self, baseUrl);
        if (!path) logger?.warn({ service: SERVICE, importId: id }, 'the import link points outside the service: reading the import by id instead');
        const read = await transport.lookup(call('GET', 'getImport', path ?? importPath(id)));
        if (!read) throw upstreamContractError(SERVICE, `the new import ${id} cannot be read through its link`, 404);
        return importOf(read);
      } catch (error) {
        // The job exists and runs from here on: a client told only "failed" would start a second one.
        if (!(error instanceof GraphQLError)) throw error;
        throw appliedButUnread(SERVICE, 'the service started the import', id, error, `follow it with importStatusChanged(id: ${JSON.stringify(id)}) or read it with import(id: ${JSON.stringify(id)}).`);
      }
    },

    async getImport(id) {
      const response = await transport.lookup(call('GET', 'getImport', importPath(id)));
      return response ? importOf(response) : null;
    },
  };
}
