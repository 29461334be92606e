import { describe, expect, it } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { startTestStack, type GraphQLResult } from '../support/stack.ts';
import { scrapeMetrics } from '../support/metrics.ts';

// QA14 finding 1, through the gateway: one credential's slow calls had filled the recognition
// subgraph's 64 upstream connections. Another credential's call to a fast endpoint waited behind
// them, and the attacker's own calls that waited for a socket past their deadline were billed to
// the service as timeouts, opening its breaker for every caller.
// A short deadline keeps it quick; the slowed answers still come well inside it.
const TIMEOUT_MS = 1600;
const LATENCY_MS = 1000;
/** The subgraph's connections to its service, and the most one caller may hold (half). */
const CONNECTIONS = 64;
const SHARE = CONNECTIONS - CONNECTIONS / 8;

const t = await startTestStack({ RECOGNITION_TIMEOUT_MS: String(TIMEOUT_MS) });
const emulator = t.emulator('recognition');
const attacker = { 'x-recognition-token': DEMO_TOKENS.admin };
const victim = { 'x-recognition-token': DEMO_TOKENS.member };
const subgraphUrl = t.stack.services.find((service) => service.name === 'recognition')!.subgraphUrl.replace(/\/graphql$/, '');

type Redemptions = GraphQLResult<{ redemptions: (null | { id: string })[] }>;
const REDEMPTIONS = 'query($ids: [ID!]!) { redemptions(ids: $ids) { id } }';

describe('one caller among many on a subgraph\'s connections', () => {
  it('cannot make another caller wait for a connection, nor open the breaker with calls it never sent', async () => {
    await emulator.reset();
    await emulator.fault({ path: '/api/v1/redemptions/*', latencyMs: LATENCY_MS });

    // Three operations of 100 lookups each (32 at once per operation): 96 calls at once, each answered
    // after LATENCY_MS, inside the deadline. None of the ids exists: each answer is a 404, a null entry.
    const ids = (run: number) => Array.from({ length: 100 }, (_, index) => `rd_attack_${run}_${index}`);
    const attacks = [0, 1, 2].map((run) => t.gql(REDEMPTIONS, { variables: { ids: ids(run) }, headers: attacker }) as Promise<Redemptions>);

    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS / 5));
    const started = performance.now();
    const caught = await t.gql('{ rewardCatalog { name } }', { headers: victim });
    const victimMs = performance.now() - started;
    expect(caught.errors).toBeUndefined();
    expect(caught.data?.rewardCatalog).toEqual(expect.arrayContaining([expect.objectContaining({ name: expect.any(String) })]));

    const results = await Promise.all(attacks);
    const log = await emulator.requests();
    const redemptionCalls = log.filter((request) => request.path.startsWith('/api/v1/redemptions/'));

    // The victim's call reached the service at once: behind the attacker's share, not behind all its calls.
    const victimAt = log.findIndex((request) => request.path === '/api/v1/rewards');
    expect(victimAt).toBeGreaterThanOrEqual(0);
    expect(log.slice(0, victimAt).filter((request) => request.path.startsWith('/api/v1/redemptions/')).length).toBeLessThanOrEqual(SHARE);
    // Generous (alone it takes a few ms): it did not wait for the slowed answers, due LATENCY_MS after the attack began.
    expect(victimMs).toBeLessThan(LATENCY_MS / 2);

    // The attacker's calls that could not be sent in time were refused unsent, saying so: no call
    // was both sent and given up on, so every lookup is an answered null or a refusal.
    const errors = results.flatMap((result) => result.errors ?? []);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error.message).toMatch(/^recognition is unavailable: .*it was not sent, .*\(this caller has \d+ calls? in flight; one caller may hold 56 of the 64 connections at once\)$/);
      expect(error.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'recognition' });
      expect(error.extensions).not.toHaveProperty('status');
    }
    expect(redemptionCalls.length + errors.length).toBe(300);
    expect(redemptionCalls.every((request) => request.status === 404)).toBe(true);

    // The service never failed: its breaker stayed closed for everyone, and the victim still gets through.
    const metrics = await scrapeMetrics(`${subgraphUrl}/metrics`);
    expect(metrics).toContain('recognition_circuit_breaker_state{service="recognition"} 0');
    expect(metrics).toContain('recognition_circuit_breaker_rejected_total{service="recognition"} 0');
    const after = await t.gql('{ rewardCatalog { name } }', { headers: victim });
    expect(after.errors).toBeUndefined();
  });
});
