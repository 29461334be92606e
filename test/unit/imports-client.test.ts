import { describe, expect, it } from 'vitest';
import { errorForUpstream, fieldErrorsOf } from '../../subgraphs/kit/errors.ts';
import { isFinal, linkPath, toImport } from '../../subgraphs/imports/client.ts';
import { knownStatus } from '../../subgraphs/imports/enums.ts';
import { nextDelay } from '../../subgraphs/imports/poller.ts';

describe('the imports client', () => {
  it('reads an import in the spec’s plain form and in the JSON:API form, and nothing else', () => {
    expect(toImport({ id: 'imp_1', type: 'swagger', status: 'in_progress', message: '' })).toEqual({ id: 'imp_1', type: 'swagger', statusText: 'in_progress', message: '' });
    expect(toImport({ data: { id: 7, type: 'imports', attributes: { import_type: 'swagger', status: 'failed', message: ['a', 'b'] } } })).toEqual({ id: '7', type: 'swagger', statusText: 'failed', message: 'a\nb' });
    expect(toImport({ id: 'imp_1', state: 'done' })).toBeUndefined();
    expect(toImport({ id: '', status: 'completed' })).toBeUndefined();
    expect(toImport('completed')).toBeUndefined();
  });

  it('follows links only below the service’s own base URL, without their query', () => {
    const base = 'https://import.example/v1';
    expect(linkPath('https://import.example/v1/imports/imp_1', base)).toBe('/imports/imp_1');
    expect(linkPath('/v1/imports/imp%201?apikey=k', base)).toBe('/imports/imp%201');
    expect(linkPath('https://elsewhere.example/v1/imports/imp_1', base)).toBeUndefined();
    expect(linkPath('http://import.example/v1/imports/imp_1', base)).toBeUndefined();
    expect(linkPath('https://import.example/v2/imports/imp_1', base)).toBeUndefined();
    expect(linkPath('https://import.example/v1/other', base)).toBeUndefined();
  });

  it('knows three statuses and keeps the others open', () => {
    expect(['in_progress', 'COMPLETED', ' failed ', 'queued', ''].map(knownStatus)).toEqual(['in_progress', 'completed', 'failed', 'other', 'other']);
  });

  it('calls final exactly the statuses it reads as completed or failed, however the text is padded or cased', () => {
    const texts = ['in_progress', 'completed', 'Completed ', ' FAILED', 'queued', 'completed.', ''];
    expect(texts.map((statusText) => isFinal({ statusText }))).toEqual([false, true, true, true, false, false, false]);
  });
});

describe('the poller’s backoff', () => {
  const backoff = { initialMs: 1000, maxMs: 30_000 };
  it('starts at the initial wait, doubles while nothing changes, stops at the maximum, and starts over after a change', () => {
    const waits: number[] = [];
    let wait: number | undefined;
    for (let poll = 0; poll < 8; poll += 1) waits.push((wait = nextDelay(wait, backoff)));
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(nextDelay(30_000, backoff, { changed: true })).toBe(1000);
  });

  it('never polls sooner than a Retry-After asks', () => {
    expect(nextDelay(1000, backoff, { retryAfterMs: 45_000 })).toBe(45_000);
    expect(nextDelay(16_000, backoff, { retryAfterMs: 1000 })).toBe(30_000);
  });
});

describe('JSON:API error objects in the error table', () => {
  it('reads detail (else title) as the message, and source.parameter or source.pointer as the field', () => {
    const body = { errors: [{ status: '422', title: 'Unprocessable Entity', detail: 'must be swagger', source: { parameter: 'import_type' } }] };
    expect(errorForUpstream({ service: 'svc', status: 422, body })).toMatchObject({ message: 'svc: must be swagger', extensions: { code: 'BAD_USER_INPUT', fieldErrors: [{ field: 'import_type', messages: ['must be swagger'] }] } });
    expect(fieldErrorsOf({ errors: [{ title: 'is required', source: { pointer: '/data/attributes/file_location' } }] })).toEqual([{ field: 'file_location', messages: ['is required'] }]);
    expect(errorForUpstream({ service: 'svc', status: 401, body: { errors: [{ status: 401, title: 'Unauthorized' }] } })).toMatchObject({ message: 'svc: Unauthorized', extensions: { code: 'UNAUTHENTICATED' } });
  });
});
