import type { LoggedEvent } from './eventLog.ts';
import { failedReadOf } from './follow.ts';

/** The trace context of the event a subscription's context last resolved, until the next one. */
const lastTraces = new WeakMap<object, string | undefined>();

/**
 * A subscription's `resolve`: the event itself, its ingestion's trace context noted against the
 * operation's context, where the subscription server finds it as it sends that event's result
 * (graphql-ws sends one result before it asks for the next event). A stand-in for a replay the
 * log failed to read raises that failure, as this result's error.
 */
export function resolveEvent<Context extends object>(event: LoggedEvent, _args: unknown, context: Context): LoggedEvent {
  lastTraces.set(context, event.trace);
  const failure = failedReadOf(event);
  if (failure) throw failure;
  return event;
}

/** The `traceparent` of the delivery that brought in the event whose result is being sent, if any. */
export function eventTraceOf(context: unknown): string | undefined {
  return context && typeof context === 'object' ? lastTraces.get(context) : undefined;
}
