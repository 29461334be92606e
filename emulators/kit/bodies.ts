import type { RouteRequest } from './router.ts';

/** Parses a JSON body; undefined when empty or not JSON (handlers answer 400 then). */
export function jsonBody(request: RouteRequest): unknown {
  if (request.body.length === 0) return undefined;
  try {
    return JSON.parse(request.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Reads a body the way the real services do: JSON whatever the content type says (some documented
 * examples send a JSON-shaped body as form-urlencoded), else form fields, else multipart fields.
 */
export async function fieldsBody(request: RouteRequest): Promise<Record<string, unknown> | undefined> {
  const json = jsonBody(request);
  if (json && typeof json === 'object' && !Array.isArray(json)) return json as Record<string, unknown>;
  const type = String(request.headers['content-type'] ?? '');
  if (type.startsWith('multipart/form-data')) {
    const form = await new Request('http://local/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: request.body,
    }).formData();
    const out: Record<string, unknown> = {};
    for (const [name, value] of form) out[name] = typeof value === 'string' ? value : value;
    return out;
  }
  if (type.startsWith('application/x-www-form-urlencoded') || request.body.length > 0) {
    const params = new URLSearchParams(request.body.toString('utf8'));
    const out: Record<string, unknown> = {};
    for (const name of new Set(params.keys())) {
      const values = params.getAll(name);
      out[name.replace(/\[\]$/, '')] = name.endsWith('[]') ? values : values[0];
    }
    return out;
  }
  return undefined;
}
