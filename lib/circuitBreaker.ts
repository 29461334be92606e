import { readInt, type Env } from './config.ts';

/**
 * A circuit breaker in front of one service: after a run of failures it refuses calls for a
 * cool-down instead of letting every caller wait for the same timeout, then lets one probe through.
 * A pure state machine on an injectable clock: the cool-down is checked when a call asks to go
 * through, so no timer runs and nothing keeps a process alive.
 */

/** `open` refuses every call; `halfOpen` lets one probe through; the probe's outcome closes or reopens it. */
export type BreakerState = 'closed' | 'open' | 'halfOpen';

export interface CircuitBreakerSettings {
  /** Failures in a row that open the breaker; 0 turns breakers off (CIRCUIT_BREAKER_FAILURES). @default 5 */
  failures: number;
  /** How long an open breaker refuses calls before it lets a probe through (CIRCUIT_BREAKER_COOLDOWN_MS). @default 30000 */
  cooldownMs: number;
  /** The clock cool-downs run on; tests pass one they move by hand. @default Date.now */
  now?: () => number;
}

export const DEFAULT_BREAKER_FAILURES = 5;
export const DEFAULT_BREAKER_COOLDOWN_MS = 30_000;

/** The breaker settings every process reads alike: the gateway for its subgraphs, each subgraph for its upstream. */
export function readCircuitBreakerSettings(env: Env): CircuitBreakerSettings {
  return {
    failures: readInt(env, 'CIRCUIT_BREAKER_FAILURES', DEFAULT_BREAKER_FAILURES, { min: 0, max: 1000 }),
    cooldownMs: readInt(env, 'CIRCUIT_BREAKER_COOLDOWN_MS', DEFAULT_BREAKER_COOLDOWN_MS, { min: 100, max: 3_600_000 }),
  };
}

/** What became of a call the breaker let through. */
export interface BreakerPermit {
  /** The service answered (whatever it answered, it is up). */
  succeeded(): void;
  /** No answer, a timeout, or a server error: one more failure in the run. */
  failed(): void;
  /** The call says nothing about the service (the caller went away, or it was never sent): a probe slot is handed back. */
  abandoned(): void;
}

/** A call refused without being made, and how long until the breaker lets a probe through. */
export interface BreakerRefusal {
  retryAfterMs: number;
}

export interface BreakerChange {
  service: string;
  from: BreakerState;
  to: BreakerState;
  /** Failures in the run that opened it (on opening). */
  failures: number;
  cooldownMs: number;
}

export interface CircuitBreaker {
  readonly service: string;
  /** The state now; an open breaker whose cool-down is over reads (and becomes) half-open. */
  state(): BreakerState;
  /** A permit to call, or the refusal: open, or half-open with its probe already in flight. */
  enter(): BreakerPermit | BreakerRefusal;
}

export const isRefusal = (entry: BreakerPermit | BreakerRefusal): entry is BreakerRefusal => 'retryAfterMs' in entry;

export interface CircuitBreakerOptions extends CircuitBreakerSettings {
  service: string;
  /** Called once per state change, for the log and metrics. */
  onChange?: (change: BreakerChange) => void;
}

export function createCircuitBreaker({ service, failures: threshold, cooldownMs, now = Date.now, onChange }: CircuitBreakerOptions): CircuitBreaker {
  if (threshold < 1) throw new RangeError(`a circuit breaker needs a failure threshold of at least 1; got ${threshold} (0 means no breaker: do not create one)`);
  let state: BreakerState = 'closed';
  let failures = 0;
  let openedAt = 0;
  let probing = false;
  // Outcomes of calls let through before the last change are stale: a call that started while the
  // breaker was closed and fails after it opened must not reopen it, nor close it by succeeding.
  let generation = 0;

  const move = (to: BreakerState) => {
    const from = state;
    state = to;
    generation += 1;
    probing = false;
    if (to === 'open') openedAt = now();
    onChange?.({ service, from, to, failures, cooldownMs });
    if (to === 'closed') failures = 0;
  };

  const current = (): BreakerState => {
    if (state === 'open' && now() - openedAt >= cooldownMs) move('halfOpen');
    return state;
  };

  const settle = (permit: { issued: number; probe: boolean; settled: boolean }, outcome: 'succeeded' | 'failed' | 'abandoned') => {
    if (permit.settled) return;
    permit.settled = true;
    if (permit.issued !== generation) return;
    if (permit.probe) {
      if (outcome === 'abandoned') probing = false;
      else move(outcome === 'succeeded' ? 'closed' : 'open');
      return;
    }
    if (outcome === 'succeeded') failures = 0;
    else if (outcome === 'failed') {
      failures += 1;
      if (failures >= threshold) move('open');
    }
  };

  // Methods, not arrow functions in properties: under tsx (which keeps function names) each of
  // those was renamed with a property definition at every call, a permit per upstream call.
  const permitFor = (issued: number, probe: boolean): BreakerPermit => {
    const permit = { issued, probe, settled: false };
    return {
      succeeded() {
        settle(permit, 'succeeded');
      },
      failed() {
        settle(permit, 'failed');
      },
      abandoned() {
        settle(permit, 'abandoned');
      },
    };
  };

  return {
    service,
    state: current,
    enter() {
      switch (current()) {
        case 'closed':
          return permitFor(generation, false);
        case 'halfOpen':
          if (probing) return { retryAfterMs: 0 };
          probing = true;
          return permitFor(generation, true);
        case 'open':
          return { retryAfterMs: openedAt + cooldownMs - now() };
      }
    },
  };
}

/** The gauge's value for a state: 0 closed, 1 open, 2 half-open. */
export const BREAKER_STATE_VALUE: Readonly<Record<BreakerState, number>> = { closed: 0, open: 1, halfOpen: 2 };
