import { createClock, type EmulatorDefinition } from '../kit/emulator.ts';
import { jsonBody } from '../kit/bodies.ts';
import type { Reply, Route, RouteHandler, RouteRequest } from '../kit/router.ts';
import { ACCOUNTS, SAMPLE_FILES, seedImports, type EmulatedImport, type ImportOutcome, type ImportsState } from './data.ts';
import { fetchDescription, importDescription } from './description.ts';

/** Where the service lives below its `{import_url}`: the spec versions it in the path. */
export const API_PREFIX = '/v1';

/**
 * How the emulator writes failures: `jsonapi` as the real service documents (`{errors: [{status,
 * title, detail, source}]}`), `message` as the spec's only hint (a `message` field), `bare` a
 * status with an empty body.
 */
export type ErrorDialect = 'jsonapi' | 'message' | 'bare';
/** How it writes an import and its link: `plain` as the spec shows, `jsonapi` wrapped in `data` with `attributes`. */
export type ResourceDialect = 'plain' | 'jsonapi';

const ERROR_DIALECTS: readonly ErrorDialect[] = ['jsonapi', 'message', 'bare'];
const RESOURCE_DIALECTS: readonly ResourceDialect[] = ['plain', 'jsonapi'];
const TITLES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 422: 'Unprocessable Entity', 429: 'Too Many Requests' };

/** How long a job stays `in_progress` on the emulator's clock unless told otherwise. */
export const DEFAULT_PROCESSING_MS = 3000;

export interface ImportsEmulator extends EmulatorDefinition {
  state(): ImportsState;
}

interface Settings {
  errors: ErrorDialect;
  resources: ResourceDialect;
  processingMs: number;
  rateLimit?: { times: number; retryAfterSeconds: number };
}

const defaults = (): Settings => ({ errors: 'jsonapi', resources: 'plain', processingMs: DEFAULT_PROCESSING_MS });

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The import service (section C of the platform services spec), under `/v1`. A job's file is
 * fetched and parsed in the background from its creation, and a read after `readyAt` waits for that
 * work, so the outcome a test sees never depends on timing; the job
 * shows `in_progress` until `processingMs` have passed on the emulator's clock, then `completed`
 * or `failed` with the parser's messages.
 */
export function createImportsEmulator(): ImportsEmulator {
  let state = seedImports();
  let settings = defaults();
  const clock = createClock();

  function failure(status: number, detail: string, parameter?: string, headers?: Record<string, string>): Reply {
    const extra = headers ? { headers } : {};
    switch (settings.errors) {
      case 'bare':
        return { status, ...extra };
      case 'message':
        return { status, body: { message: detail }, ...extra };
      default:
        // The vendor's documentation shows `status` as a number, where JSON:API writes a string.
        return { status, body: { errors: [{ status, title: TITLES[status] ?? 'Error', detail, ...(parameter ? { source: { parameter } } : {}) }] }, ...extra };
    }
  }

  /** Every call carries `apikey` in its query; a key names its account. */
  function authenticated(handler: (request: RouteRequest, account: string) => Reply | Promise<Reply>): RouteHandler {
    return (request) => {
      if (settings.rateLimit && settings.rateLimit.times > 0) {
        settings.rateLimit.times -= 1;
        return failure(429, 'Too many requests: slow down', undefined, { 'retry-after': String(settings.rateLimit.retryAfterSeconds) });
      }
      const key = request.query.get('apikey');
      if (!key) return failure(401, 'An API key is required: pass it as the apikey query parameter', 'apikey');
      const account = ACCOUNTS[key];
      if (!account) return failure(401, 'The API key is not valid', 'apikey');
      return handler(request, account);
    };
  }

  const selfLink = (request: RouteRequest, id: string) => `http://${request.headers.host ?? '127.0.0.1'}${API_PREFIX}/imports/${encodeURIComponent(id)}`;

  async function statusOf(job: EmulatedImport): Promise<{ status: string; message: string }> {
    if (job.forced) return job.forced;
    return clock.now() >= job.readyAt ? job.outcome : { status: 'in_progress', message: '' };
  }

  async function present(request: RouteRequest, job: EmulatedImport): Promise<unknown> {
    const { status, message } = await statusOf(job);
    if (settings.resources === 'jsonapi') return { data: { type: 'imports', id: job.id, attributes: { import_type: 'swagger', status, message }, links: { self: selfLink(request, job.id) } } };
    return { id: job.id, type: 'swagger', status, message };
  }

  async function create(request: RouteRequest, account: string): Promise<Reply> {
    const query = request.query;
    const apiId = query.get('api_id') ?? '';
    const importType = query.get('import_type') ?? '';
    const fileLocation = query.get('file_location') ?? '';
    const apiVersionId = query.get('api_version_id') || null;
    if (!apiId) return failure(400, 'api_id is required', 'api_id');
    if (!importType) return failure(400, 'import_type is required', 'import_type');
    if (importType !== 'swagger') return failure(422, `import_type must be swagger; got ${importType.slice(0, 40)}`, 'import_type');
    if (!fileLocation) return failure(400, 'file_location is required', 'file_location');
    if (!isHttpUrl(fileLocation)) return failure(422, 'file_location must be an absolute http or https URL', 'file_location');
    const api = state.apis.find((candidate) => candidate.id === apiId && candidate.account === account);
    if (!api) return failure(404, `No API ${apiId.slice(0, 40)} in this account`, 'api_id');
    if (apiVersionId && !api.versions.includes(apiVersionId)) return failure(404, `API ${api.id} has no version ${apiVersionId.slice(0, 40)}`, 'api_version_id');

    // The version a successful import without `api_version_id` creates is named now, so that ids do
    // not depend on which job's work finishes first.
    const newVersionId = `ver_${state.nextVersion}`;
    if (!apiVersionId) state.nextVersion += 1;
    const outcome = (async (): Promise<ImportOutcome> => {
      try {
        const fetched = await fetchDescription(fileLocation);
        const result = 'text' in fetched ? await importDescription(fetched.text, { apiVersionId, newVersionId }) : fetched;
        if (result.status === 'completed' && !apiVersionId) api.versions.push(newVersionId);
        return result;
      } catch (error) {
        // Background work must not crash the emulator: a bug of ours shows as a failed job.
        return { status: 'failed', message: `The import failed: ${(error as Error).message}` };
      }
    })();
    const now = clock.now();
    const job: EmulatedImport = {
      id: `imp_${String(state.nextImport).padStart(4, '0')}`,
      account,
      apiId,
      fileLocation,
      apiVersionId,
      createdAt: now,
      readyAt: now + settings.processingMs,
      outcome,
    };
    state.nextImport += 1;
    state.imports.push(job);
    const link = { type: 'imports', id: job.id, links: { self: selfLink(request, job.id) } };
    return { status: 202, body: settings.resources === 'jsonapi' ? { data: link } : link };
  }

  const createRoute = authenticated(create);
  const readRoute = authenticated(async (request, account) => {
    const job = state.imports.find((candidate) => candidate.id === request.params.id && candidate.account === account);
    return job ? { status: 200, body: await present(request, job) } : failure(404, 'Import not found');
  });

  const routes: Route[] = [
    { method: 'POST', path: `${API_PREFIX}/imports`, handler: createRoute },
    // The vendor's own example writes the collection with a trailing slash.
    { method: 'POST', path: `${API_PREFIX}/imports/`, handler: createRoute },
    { method: 'GET', path: `${API_PREFIX}/imports/:id`, handler: readRoute },
  ];

  const objectBody = (request: RouteRequest): Record<string, unknown> => {
    const body = jsonBody(request);
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  };

  const controls: Route[] = [
    {
      method: 'GET',
      path: '/__emulator/files/:name',
      handler: (request) => {
        const file = SAMPLE_FILES[request.params.name ?? ''];
        return file ? { status: 200, raw: file.text, headers: { 'content-type': file.contentType } } : { status: 404, body: { message: `no sample file ${request.params.name}; try ${Object.keys(SAMPLE_FILES).join(', ')}` } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/dialect',
      handler: (request) => {
        const body = objectBody(request);
        if (body.errors !== undefined && !ERROR_DIALECTS.includes(body.errors as ErrorDialect)) return { status: 400, body: { message: `errors must be one of ${ERROR_DIALECTS.join(', ')}` } };
        if (body.resources !== undefined && !RESOURCE_DIALECTS.includes(body.resources as ResourceDialect)) return { status: 400, body: { message: `resources must be one of ${RESOURCE_DIALECTS.join(', ')}` } };
        if (body.errors) settings.errors = body.errors as ErrorDialect;
        if (body.resources) settings.resources = body.resources as ResourceDialect;
        return { status: 200, body: { errors: settings.errors, resources: settings.resources } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/processing',
      handler: (request) => {
        const { ms } = objectBody(request);
        if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0) return { status: 400, body: { message: 'expected {"ms": whole number of milliseconds}' } };
        settings.processingMs = ms;
        return { status: 200, body: { processingMs: ms } };
      },
    },
    {
      method: 'POST',
      path: '/__emulator/rate-limit',
      handler: (request) => {
        const { times, retryAfterSeconds } = objectBody(request);
        if (typeof times !== 'number' || typeof retryAfterSeconds !== 'number') return { status: 400, body: { message: 'expected {"times": number, "retryAfterSeconds": number}' } };
        settings.rateLimit = { times, retryAfterSeconds };
        return { status: 200, body: settings.rateLimit };
      },
    },
    {
      method: 'GET',
      path: '/__emulator/imports',
      handler: async () => ({ status: 200, body: await Promise.all(state.imports.map(async ({ outcome, ...job }) => ({ ...job, outcome: await outcome, shown: await statusOf({ ...job, outcome }) }))) }),
    },
    {
      method: 'POST',
      path: '/__emulator/imports/:id',
      handler: (request) => {
        const job = state.imports.find((candidate) => candidate.id === request.params.id);
        if (!job) return { status: 404, body: { message: `no import ${request.params.id}` } };
        const { status, message } = objectBody(request);
        if (typeof status !== 'string' || status === '') return { status: 400, body: { message: 'expected {"status": text, "message"?: text}' } };
        job.forced = { status, message: typeof message === 'string' ? message : '' };
        return { status: 200, body: job.forced };
      },
    },
  ];

  const definition: ImportsEmulator = {
    name: 'imports',
    clock,
    routes,
    controls,
    reset: () => {
      state = seedImports();
      settings = defaults();
    },
    state: () => state,
  };
  return definition;
}
