import { describe, expect, it } from 'vitest';
import { readGatewayConfig } from '../../gateway/config.ts';
import { ConfigError, readLogLevel } from '../../lib/config.ts';
import { readMessagingConfig } from '../../subgraphs/messaging/config.ts';
import { readDashboardsConfig } from '../../subgraphs/dashboards/config.ts';
import { readGatewayAdminConfig } from '../../subgraphs/gatewayAdmin/config.ts';
import { readMarketplaceConfig } from '../../subgraphs/marketplace/config.ts';
import { readRecognitionConfig } from '../../subgraphs/recognition/config.ts';

describe('fast-path switches', () => {
  it('are on unless a setting turns them off', () => {
    expect(readGatewayConfig({}).fastPaths).toEqual({ singleFetch: true, passThrough: true });
    expect(readGatewayConfig({ GATEWAY_SINGLE_FETCH: 'off', GATEWAY_PASS_THROUGH: 'false' }).fastPaths).toEqual({ singleFetch: false, passThrough: false });
    for (const read of [readRecognitionConfig, readMarketplaceConfig, readDashboardsConfig]) {
      expect(read({}).compiledExecution).toBe(true);
      expect(read({ SUBGRAPH_COMPILED_EXECUTION: 'off' }).compiledExecution).toBe(false);
    }
  });

  it('refuse a value that is neither on nor off, naming the setting', () => {
    expect(() => readGatewayConfig({ GATEWAY_PASS_THROUGH: 'sometimes' })).toThrow(new ConfigError('GATEWAY_PASS_THROUGH must be on or off (also true/false, yes/no, 1/0); got "sometimes".'));
    expect(() => readDashboardsConfig({ SUBGRAPH_COMPILED_EXECUTION: 'maybe' })).toThrow(/SUBGRAPH_COMPILED_EXECUTION/);
  });
});

describe('service settings from the registry', () => {
  it('reads each subgraph’s port, upstream and deadline under its own name', () => {
    const config = readMarketplaceConfig({ MARKETPLACE_SUBGRAPH_PORT: '6002', MARKETPLACE_EMULATOR_PORT: '6102', MARKETPLACE_TIMEOUT_MS: '2500' });
    expect(config).toMatchObject({ port: 6002, apiUrl: 'http://127.0.0.1:6102', productsApiUrl: 'http://127.0.0.1:6102', timeoutMs: 2500 });
    expect(readRecognitionConfig({ RECOGNITION_API_URL: 'https://api.example/' }).apiUrl).toBe('https://api.example');
    expect(readDashboardsConfig({})).toMatchObject({ port: 4003, apiUrl: 'http://127.0.0.1:4103' });
    expect(readGatewayConfig({ DASHBOARDS_SUBGRAPH_URL: 'http://10.0.0.5:9000/graphql' }).subgraphUrls).toEqual({
      recognition: 'http://127.0.0.1:4001/graphql',
      marketplace: 'http://127.0.0.1:4002/graphql',
      dashboards: 'http://10.0.0.5:9000/graphql',
      messaging: 'http://127.0.0.1:4004/graphql',
      imports: 'http://127.0.0.1:4005/graphql',
      gatewayAdmin: 'http://127.0.0.1:4006/graphql',
    });
    expect(readMessagingConfig({ MESSAGING_EMULATOR_PORT: '6104', MESSAGING_TIMEOUT_MS: '3000' })).toMatchObject({ port: 4004, apiUrl: 'http://127.0.0.1:6104', timeoutMs: 3000 });
    // A camel-case name reads its settings in upper snake case.
    expect(readGatewayAdminConfig({ GATEWAY_ADMIN_SUBGRAPH_PORT: '6006', GATEWAY_ADMIN_EMULATOR_PORT: '6106' })).toMatchObject({ port: 6006, apiUrl: 'http://127.0.0.1:6106', adminToken: undefined });
    expect(readGatewayConfig({ GATEWAY_ADMIN_SUBGRAPH_URL: 'http://10.0.0.6:9000/graphql' }).subgraphUrls.gatewayAdmin).toBe('http://10.0.0.6:9000/graphql');
    expect(() => readGatewayAdminConfig({ GATEWAY_ADMIN_TOKEN: 'short' })).toThrow(/GATEWAY_ADMIN_TOKEN must be at least 16 characters/);
  });
});

describe('settings read outside the registry', () => {
  it('refuse a bad value naming the setting, where it once crashed elsewhere or was taken', () => {
    for (const value of ['null', '42', '[1]', '{"x-a": 1}', 'not json']) {
      expect(() => readGatewayConfig({ SANDBOX_HEADERS: value }), value).toThrow(/^SANDBOX_HEADERS must be a JSON object/);
    }
    expect(readGatewayConfig({ SANDBOX_HEADERS: '{"x-a":"b"}' }).sandboxHeaders).toEqual({ 'x-a': 'b' });
    expect(() => readGatewayConfig({ SUPERGRAPH_PATH: '/nowhere/supergraph.graphql' })).toThrow(new ConfigError('SUPERGRAPH_PATH names no file: /nowhere/supergraph.graphql'));
    for (const host of ['not a host', 'http://x', '-x']) expect(() => readGatewayConfig({ HOST: host }), host).toThrow(/^HOST must be/);
    expect(() => readRecognitionConfig({ HOST: 'a b' })).toThrow(/^HOST must be/);
    for (const host of ['0.0.0.0', '::1', 'localhost', 'gateway.internal']) expect(readGatewayConfig({ HOST: host }).host).toBe(host);
    expect(() => readLogLevel({ LOG_LEVEL: 'verbose' }, 'info')).toThrow(/^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/);
    expect(readLogLevel({}, 'warn')).toBe('warn');
    expect(readLogLevel({ LOG_LEVEL: 'debug' }, 'warn')).toBe('debug');
  });

  it('take a count in decimal digits only: Number() would read 0x100, 1e3 and padded text', () => {
    for (const value of ['0x100', '1e3', ' 12', '12 ', '1_000', '+5', '12.0']) {
      expect(() => readGatewayConfig({ MAX_QUERY_DEPTH: value }), value).toThrow(new ConfigError(`MAX_QUERY_DEPTH must be a whole number from 2 to 100; got "${value}".`));
    }
    expect(readGatewayConfig({ MAX_QUERY_DEPTH: '20' }).limits.maxDepth).toBe(20);
  });
});
