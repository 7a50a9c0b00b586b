import { describe, expect, it } from 'vitest';
import { compiled, configWith, parseObject, problems } from './fixtures.js';

const traces = (value: Record<string, unknown>) => configWith({ telemetry: { traces: value } });

describe('telemetry.traces', () => {
  it('is off by default: nothing to load', () => {
    expect(compiled(parseObject(configWith({}))).telemetry).toEqual({ traces: undefined });
  });

  it.each([
    ['an endpoint without a path gets the OTLP traces path', 'http://collector:4318', 'http://collector:4318/v1/traces'],
    ['an endpoint with a path is used as is', 'https://otlp.example.com/custom/traces', 'https://otlp.example.com/custom/traces'],
  ])('%s', (_title, endpoint, expected) => {
    const config = compiled(parseObject(traces({ otlp_endpoint: endpoint })));
    expect(config.telemetry.traces?.endpoint.href).toBe(expected);
    expect(config.telemetry.traces?.sampleRatio).toBe(1);
  });

  it('header values are secrets resolved from references, never printed', () => {
    const result = parseObject(traces({ otlp_endpoint: 'https://otlp.example.com', sample_ratio: 0.1, headers: { 'X-Api-Key': '${env:COLLECTOR_KEY}' } }), {
      env: { COLLECTOR_KEY: 'collector-key-canary' },
    });
    const config = compiled(result);
    expect(config.telemetry.traces?.sampleRatio).toBe(0.1);
    expect(config.telemetry.traces?.headers.get('x-api-key')?.reveal()).toBe('collector-key-canary');
    expect(JSON.stringify(config)).not.toContain('collector-key-canary');
    expect(config.warnings).toEqual([]);
  });

  it('check-config warns about a literal header value, and about headers sent in clear to a remote host', () => {
    const config = compiled(parseObject(traces({ otlp_endpoint: 'http://collector.example.com:4318', headers: { authorization: 'Bearer literal' } })));
    expect(config.warnings).toEqual([
      'telemetry.traces.headers.authorization: literal secret in config; prefer ${env:…} or ${file:…}',
      'telemetry.traces.otlp_endpoint: plain http to a remote host sends telemetry.traces.headers in clear; use https',
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a sample ratio above 1', { otlp_endpoint: 'http://127.0.0.1:4318', sample_ratio: 1.5 }, 'telemetry.traces.sample_ratio'],
    ['a negative sample ratio', { otlp_endpoint: 'http://127.0.0.1:4318', sample_ratio: -0.1 }, 'telemetry.traces.sample_ratio'],
    ['an endpoint that is no URL', { otlp_endpoint: 'collector:4318' }, 'telemetry.traces.otlp_endpoint'],
    ['credentials in the endpoint (they belong in headers)', { otlp_endpoint: 'https://user:pw@otlp.example.com' }, 'telemetry.traces.otlp_endpoint'],
    ['no endpoint', { sample_ratio: 0.5 }, 'telemetry.traces.otlp_endpoint'],
    ['a header name that is no token', { otlp_endpoint: 'http://127.0.0.1:4318', headers: { 'bad name': 'x' } }, 'telemetry.traces.headers.bad name'],
    ['a header value with a line break', { otlp_endpoint: 'http://127.0.0.1:4318', headers: { 'x-key': 'a\nInjected: b' } }, 'telemetry.traces.headers.x-key'],
    ['an unknown key', { otlp_endpoint: 'http://127.0.0.1:4318', protocol: 'grpc' }, 'telemetry.traces.protocol'],
  ])('rejects %s, naming the path', (_title, value, path) => {
    expect(problems(parseObject(traces(value))).map((problem) => problem.path)).toEqual([path]);
  });
});
