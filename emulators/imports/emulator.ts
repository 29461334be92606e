import { createClock, type EmulatorDefinition } from '../kit/emulator.ts';
import { jsonBody } from '../kit/bodies.ts';
import type { Reply, Route, RouteHandler, RouteRequest } from '../kit/router.ts';
import { ACCOUNTS, SAMPLE_FILES, seedImports, type EmulatedImport, type ImportOutcome, type ImportsState } from './data.ts';
import { fetchDescription, importDescription } from './description.ts';

/** Where the service lives below its `{import_url}`: the spec versions it in the path. */
export const API_PREFIX = '/v1';

const TITLES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 422: 'Unprocessable Entity', 429: 'Too Many Requests' };

/** How long a job stays `in_progress` on the emulator's clock unless told otherwise. */
export const DEFAULT_PROCESSING_MS = 3000;

export interface ImportsEmulator extends EmulatorDefinition {
  state(): ImportsState;
}

interface Settings {
  /** Failures answer a bare status with an empty body, in either dialect. */
  bareErrors: boolean;
  processingMs: number;
  rateLimit?: { times: number; retryAfterSeconds: number };
}

const defaults = (): Settings => ({ bareErrors: false, processingMs: DEFAULT_PROCESSING_MS });

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

  /** The parameter each failure names, for the real dialect's `source` (the spec's form has no place for it). */
  const parameters = new WeakMap<Reply, string>();

  /** A failure in the spec's form: the spec shows only a `message` (on an import), so failures carry one too. */
  function failure(status: number, detail: string, parameter?: string, headers?: Record<string, string>): Reply {
    const reply: Reply = settings.bareErrors ? { status } : { status, body: { message: detail } };
    if (headers) reply.headers = headers;
    if (parameter) parameters.set(reply, parameter);
    return reply;
  }

  /**
   * The vendor's dialect: failures in the JSON:API errors format it documents (its example writes
   * `status` as a number, where JSON:API writes text), imports and links as JSON:API resources.
   */
  function toRealDialect(reply: Reply, request: RouteRequest): Reply {
    const body = reply.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return reply;
    if (reply.status >= 400) {
      const parameter = parameters.get(reply);
      return { ...reply, body: { errors: [{ status: reply.status, title: TITLES[reply.status] ?? 'Error', detail: body.message, ...(parameter ? { source: { parameter } } : {}) }] } };
    }
    if (reply.status === 202) return { ...reply, body: { data: body } };
    if (typeof body.id === 'string' && typeof body.status === 'string') {
      return { ...reply, body: { data: { type: 'imports', id: body.id, attributes: { import_type: body.type, status: body.status, message: body.message }, links: { self: selfLink(request, body.id) } } } };
    }
    return reply;
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

  async function present(job: EmulatedImport): Promise<unknown> {
    const { status, message } = await statusOf(job);
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
    return { status: 202, body: { type: 'imports', id: job.id, links: { self: selfLink(request, job.id) } } };
  }

  const createRoute = authenticated(create);
  const readRoute = authenticated(async (request, account) => {
    const job = state.imports.find((candidate) => candidate.id === request.params.id && candidate.account === account);
    return job ? { status: 200, body: await present(job) } : failure(404, 'Import not found');
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
      path: '/__emulator/bare-errors',
      handler: (request) => {
        const { on } = objectBody(request);
        if (typeof on !== 'boolean') return { status: 400, body: { message: 'expected {"on": true|false}' } };
        settings.bareErrors = on;
        return { status: 200, body: { bareErrors: on } };
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
    realDialect: toRealDialect,
    reset: () => {
      state = seedImports();
      settings = defaults();
    },
    state: () => state,
  };
  return definition;
}
