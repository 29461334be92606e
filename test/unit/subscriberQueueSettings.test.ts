import { describe, expect, it } from 'vitest';
import { readGatewayConfig } from '../../gateway/config.ts';
import { ConfigError } from '../../lib/config.ts';

describe('MAX_SUBSCRIBER_QUEUED_BYTES', () => {
  it('bounds a slow subscriber’s queue at 8 MiB unless set, beside the count bound', () => {
    expect(readGatewayConfig({}).subscriptionLimits).toMatchObject({ queuedEventsPerSubscriber: 10_000, queuedBytesPerSubscriber: 8 * 1024 * 1024 });
    expect(readGatewayConfig({ MAX_SUBSCRIBER_QUEUED_BYTES: '65536' }).subscriptionLimits.queuedBytesPerSubscriber).toBe(65_536);
  });

  it.each(['0', '16383', '1073741825', '8MiB', '-1', '1.5'])('refuses %s, naming the setting and its range', (value) => {
    expect(() => readGatewayConfig({ MAX_SUBSCRIBER_QUEUED_BYTES: value })).toThrow(new ConfigError(`MAX_SUBSCRIBER_QUEUED_BYTES must be a whole number from 16384 to 1073741824; got "${value}".`));
  });
});
