import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config.ts';
import { readTracingConfig, startTracing, tracerFor } from '../../lib/tracing.ts';
import { restPath, routeTemplateOf } from '../../subgraphs/kit/paths.ts';

describe('the tracing settings', () => {
  it('export nothing unless an OTLP endpoint is set', () => {
    expect(readTracingConfig({}, 'gateway')).toEqual({ enabled: false });
    expect(readTracingConfig({ OTEL_SERVICE_NAME: 'named' }, 'gateway')).toEqual({ enabled: false });
  });

  it('send to the base endpoint’s /v1/traces, or to the traces endpoint as given', () => {
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'gateway')).toEqual({ enabled: true, serviceName: 'gateway', url: 'http://collector:4318/v1/traces', attributeValueLengthLimit: 1024 });
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/v1/traces' }, 'gateway')).toMatchObject({ url: 'https://tempo.example/otlp/v1/traces' });
  });

  it('take the service name and attribute length the operator gives', () => {
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'gateway-eu', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '256' }, 'gateway')).toMatchObject({ serviceName: 'gateway-eu', attributeValueLengthLimit: 256 });
  });

  it('are off when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, whatever the endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readTracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, 'gateway')).toEqual({ enabled: false });
    expect(readTracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }, 'gateway')).toEqual({ enabled: false });
    expect(readTracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'gateway')).toEqual({ enabled: false });
    expect(readTracingConfig({ ...endpoint, OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }, 'gateway')).toMatchObject({ enabled: true });
  });

  it('refuse what they cannot honour, naming the variable', () => {
    expect(() => readTracingConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'gateway')).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(() => readTracingConfig({ OTEL_SDK_DISABLED: 'maybe' }, 'gateway')).toThrow(ConfigError);
    expect(() => readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'gateway')).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => readTracingConfig({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '0' }, 'gateway')).toThrow(/OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT/);
  });

  it('register nothing when off: the API stays a no-op and no part gets a tracer', async () => {
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, { serviceName: 'gateway' })).toBe(false);
    expect(tracerFor('gateway')).toBeUndefined();
    const span = trace.getTracer('any').startSpan('anything');
    expect(span.isRecording()).toBe(false);
    span.end();
  });
});

describe('route templates of upstream paths', () => {
  it('name a built path by its template, never its values or query string', () => {
    const path = restPath('/dashboards/:dashboardId/widgets/:id', { dashboardId: 'dash-7', id: 'w 1' });
    expect(routeTemplateOf(`${path}?page=2`)).toBe('/dashboards/{dashboardId}/widgets/{id}');
    expect(routeTemplateOf(restPath('/dashboards/:id', { id: 'slug-of-a-dashboard' }))).toBe('/dashboards/{id}');
  });

  it('keep what was appended to a built path, and a path built from no value as it is', () => {
    expect(routeTemplateOf(`${restPath('/shipments/:marketplace/', { marketplace: 'mkt' })}view`)).toBe('/shipments/{marketplace}/view');
    expect(routeTemplateOf('/status_types')).toBe('/status_types');
  });
});
