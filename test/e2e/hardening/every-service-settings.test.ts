import { describe, expect, it } from 'vitest';
import { SERVICES } from '../../../lib/services.ts';
import { startTestStack } from '../../support/stack.ts';

/**
 * The README promises `MAX_REQUEST_UPSTREAM_CALLS` and `<SERVICE>_MAX_RESPONSE_BYTES` for every
 * service. Messaging, imports and the gateway administration once ignored the first (and messaging
 * and imports the second): their requests were not bound to a budget at all. Each service is held
 * here to both, through the gateway, on its emulator's request log.
 */
const MAX_RESPONSE_BYTES = 4096;
const budgeted = await startTestStack({ MAX_REQUEST_UPSTREAM_CALLS: '1' });
const capped = await startTestStack(Object.fromEntries(SERVICES.map((service) => [service.env.maxResponseBytes, String(MAX_RESPONSE_BYTES)])));

/** Per service, an operation that costs two upstream calls or more, and one field. */
const PROBES: Record<string, { twoCalls: string; oneCall: string }> = {
  recognition: { twoCalls: '{ a: reward(id: "x1") { id } b: reward(id: "x2") { id } }', oneCall: '{ reward(id: "x1") { id } }' },
  marketplace: { twoCalls: '{ a: product(sku: "x1") { sku } b: product(sku: "x2") { sku } }', oneCall: '{ product(sku: "x1") { sku } }' },
  dashboards: { twoCalls: '{ a: dashboard(id: "x1") { id } b: dashboard(id: "x2") { id } }', oneCall: '{ dashboard(id: "x1") { id } }' },
  messaging: { twoCalls: '{ a: store(id: "x1") { id } b: store(id: "x2") { id } }', oneCall: '{ store(id: "x1") { id } }' },
  imports: { twoCalls: '{ a: import(id: "x1") { id } b: import(id: "x2") { id } }', oneCall: '{ import(id: "x1") { id } }' },
  gatewayAdmin: {
    // Three calls at once: the API, its plugins and the consumer's applications.
    twoCalls: '{ explorerSettings(api: "x1", consumer: "c") { clientId } }',
    oneCall: '{ explorerSettings(api: "x1", consumer: "c") { clientId } }',
  },
};

describe.each(SERVICES.map((service) => service.name))('%s', (name) => {
  const probe = PROBES[name]!;

  it('makes no more upstream calls per request than MAX_REQUEST_UPSTREAM_CALLS', async () => {
    const emulator = budgeted.emulator(name);
    await emulator.reset();
    const result = await budgeted.gql(probe.twoCalls, { headers: budgeted.stack.demoHeaders });
    expect((await emulator.requests()).filter((request) => !request.path.startsWith('/__emulator/'))).toHaveLength(1);
    expect(result.errors?.map((error) => error.extensions?.code)).toContain('OPERATION_TOO_EXPENSIVE');
  });

  it(`refuses an upstream answer over <SERVICE>_MAX_RESPONSE_BYTES (${MAX_RESPONSE_BYTES}) as UPSTREAM_ERROR`, async () => {
    const emulator = capped.emulator(name);
    await emulator.reset();
    await emulator.fault({ path: '*', status: 200, body: { id: 'x1', padding: 'p'.repeat(2 * MAX_RESPONSE_BYTES) } });
    const result = await capped.gql(probe.oneCall, { headers: capped.stack.demoHeaders });
    expect(result.errors).toMatchObject([{ message: expect.stringContaining(`larger than the ${MAX_RESPONSE_BYTES} bytes`), extensions: { code: 'UPSTREAM_ERROR', service: name } }]);
  });
});

it('covers every registered service', () => {
  expect(Object.keys(PROBES).sort()).toEqual(SERVICES.map((service) => service.name).sort());
});
