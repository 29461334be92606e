import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config.ts';
import { SERVICES } from '../../lib/services.ts';
import { readSubgraphConfig } from '../../subgraphs/kit/subgraphConfig.ts';

// The connection gate's share and queue, read alike for every service with its other upstream
// settings (`<SERVICE>_MAX_RESPONSE_BYTES`); unset, the transport's defaults hold (56 of 64, 1024).

describe.each(SERVICES.map((service) => [service.name, service] as const))('%s', (_name, service) => {
  it('reads <SERVICE>_CONNECTIONS_PER_CALLER and <SERVICE>_MAX_WAITING_PER_CALLER into its upstream limits', () => {
    const { upstreamLimits } = readSubgraphConfig({ [service.env.connectionsPerCaller]: '2', [service.env.maxWaitingPerCaller]: '0' }, service);
    expect(upstreamLimits).toMatchObject({ connectionsPerCaller: 2, maxWaitingPerCaller: 0 });
    const unset = readSubgraphConfig({ [service.env.connectionsPerCaller]: '' }, service).upstreamLimits;
    expect(unset).not.toHaveProperty('connectionsPerCaller');
    expect(unset).not.toHaveProperty('maxWaitingPerCaller');
  });

  it('refuses a value out of bounds or not a whole number, naming the setting', () => {
    const read = (name: string, value: string) => () => readSubgraphConfig({ [name]: value }, service);
    for (const value of ['0', '65', '1.5', 'half']) {
      expect(read(service.env.connectionsPerCaller, value)).toThrow(new ConfigError(`${service.env.connectionsPerCaller} must be a whole number from 1 to 64; got "${value}".`));
    }
    for (const value of ['-1', '100001', 'lots']) {
      expect(read(service.env.maxWaitingPerCaller, value)).toThrow(new ConfigError(`${service.env.maxWaitingPerCaller} must be a whole number from 0 to 100000; got "${value}".`));
    }
    expect(readSubgraphConfig({ [service.env.connectionsPerCaller]: '64', [service.env.maxWaitingPerCaller]: '100000' }, service).upstreamLimits).toMatchObject({ connectionsPerCaller: 64, maxWaitingPerCaller: 100_000 });
  });
});
