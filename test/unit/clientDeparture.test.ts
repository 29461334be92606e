import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClientDeparture, onCancel } from '../../lib/http.ts';
import { countAbortControllers } from '../support/abortControllers.ts';

const fakeResponse = () => Object.assign(new EventEmitter(), { writableFinished: false });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('a client’s departure', () => {
  it('makes no AbortController while nobody asks for its signal, and tells its listeners when the client goes away', () => {
    const made = countAbortControllers();
    const res = fakeResponse();
    const departure = new ClientDeparture(res as unknown as ServerResponse);
    const heard: unknown[] = [];
    departure.once('abort', () => heard.push(departure.reason));
    expect(departure.aborted).toBe(false);
    res.emit('close');
    expect(made()).toBe(0);
    expect(departure.aborted).toBe(true);
    expect(heard).toHaveLength(1);
    expect((heard[0] as Error).name).toBe('AbortError');
    // Asked for afterwards, the signal is aborted already, with the same reason.
    expect(departure.signal.aborted).toBe(true);
    expect(departure.signal.reason).toBe(heard[0]);
    expect(made()).toBe(1);
  });

  it('aborts a signal asked for before the client went away, and only once', () => {
    const res = fakeResponse();
    const departure = new ClientDeparture(res as unknown as ServerResponse);
    const signal = departure.signal;
    expect(departure.signal).toBe(signal);
    const aborted = vi.fn();
    signal.addEventListener('abort', aborted);
    res.emit('close');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(departure.reason);
    expect(aborted).toHaveBeenCalledTimes(1);
  });

  it('is not told by the close of an answer written whole', () => {
    const res = fakeResponse();
    const departure = new ClientDeparture(res as unknown as ServerResponse);
    res.writableFinished = true;
    res.emit('close');
    expect(departure.aborted).toBe(false);
    expect(departure.signal.aborted).toBe(false);
  });
});

describe('a departure with many listeners', () => {
  it('warns of no leak for more than ten subgraph calls in flight at once', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const departure = new ClientDeparture(fakeResponse() as unknown as ServerResponse);
      const unlisten = Array.from({ length: 50 }, () => onCancel(departure, () => {}));
      for (const stop of unlisten) stop();
      expect(departure.listenerCount('abort')).toBe(0);
      // Node tells its warnings on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
