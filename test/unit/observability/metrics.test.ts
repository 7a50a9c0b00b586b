import { describe, expect, it } from 'vitest';
import {
  createGatewayMetrics,
  methodLabel,
  requestOutcome,
  upstreamStatusClass,
  type RequestOutcome,
  type UpstreamStatusClass,
} from '../../../src/observability/metrics.js';
import { createMemoryStore } from '../../../src/cache/memory-store.js';
import { parseMetrics, sampleValue } from '../../helpers/metrics.js';

describe('label values come from closed sets', () => {
  it.each<[number | undefined, RequestOutcome]>([
    [200, 'ok'], [202, 'ok'], [204, 'ok'], [304, 'ok'],
    [400, '400'], [401, '401'], [403, '403'], [404, '404'], [413, '413'], [429, '429'],
    [405, '4xx'], [431, '4xx'], [500, '5xx'], [502, '5xx'], [503, '5xx'], [504, '5xx'],
    [undefined, 'aborted'],
  ])('status %s → outcome %s', (status, outcome) => {
    expect(requestOutcome(status)).toBe(outcome);
  });

  it.each<[number | 'unreachable' | 'timeout', UpstreamStatusClass]>([
    [101, '1xx'], [200, '2xx'], [307, '3xx'], [404, '4xx'], [503, '5xx'], [999, '5xx'], ['unreachable', 'unreachable'], ['timeout', 'timeout'],
  ])('upstream %s → %s', (result, statusClass) => {
    expect(upstreamStatusClass(result)).toBe(statusClass);
  });

  it.each([['GET', 'GET'], ['POST', 'POST'], ['DELETE', 'DELETE'], ['OPTIONS', 'OPTIONS'], ['PROPFIND', 'other'], ['M-SEARCH', 'other']])(
    'method %s → %s',
    (method, label) => {
      expect(methodLabel(method)).toBe(label);
    },
  );
});

describe('gateway metrics', () => {
  it('each gateway has its own registry: counts do not leak between gateways', async () => {
    const first = createGatewayMetrics();
    const second = createGatewayMetrics();
    first.request('calc', 'POST', 'ok');
    first.configReload('failure');
    const firstSamples = parseMetrics((await first.render()).body);
    const secondSamples = parseMetrics((await second.render()).body);
    expect(sampleValue(firstSamples, 'mcp_gateway_requests_total', { route: 'calc' })).toBe(1);
    expect(sampleValue(secondSamples, 'mcp_gateway_requests_total', { route: 'calc' })).toBeUndefined();
    expect(sampleValue(secondSamples, 'mcp_gateway_config_reloads_total', { result: 'failure' })).toBe(0);
  });

  it('adapts the verifier counters and tracks the stream gauge', async () => {
    const metrics = createGatewayMetrics();
    const counters = metrics.authCounters;
    counters.cacheHit();
    counters.cacheMiss();
    counters.negativeHit();
    counters.asCall();
    counters.asError('timeout');
    counters.jwksRefresh?.('failure', 'jwks_no_usable_keys');
    counters.jwksRefresh?.('success');
    counters.jwksStaleServe?.();
    metrics.sseStreamOpened();
    metrics.sseStreamOpened();
    metrics.sseStreamClosed();
    metrics.authDecision('calc', 'jwt', 'accepted', 0.002);
    metrics.upstream('calc', '2xx', 0.05);
    const { contentType, body } = await metrics.render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseMetrics(body);
    expect(sampleValue(samples, 'mcp_gateway_introspection_cache_total', { result: 'negative_hit' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_introspection_as_errors_total', { reason: 'timeout' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_jwks_refresh_total', { result: 'failure' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_jwks_refresh_total', { result: 'success' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_jwks_refresh_failures_total', { reason: 'jwks_no_usable_keys' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_jwks_stale_serves_total')).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_sse_streams_open')).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_auth_decision_seconds_bucket', { route: 'calc', kind: 'jwt', result: 'accepted', le: '0.0025' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_upstream_request_seconds_count', { route: 'calc', status_class: '2xx' })).toBe(1);
  });
});

describe('histogram observations', () => {
  it('every observation is in the next scrape, however few or many (held ones are handed over when read)', async () => {
    const metrics = createGatewayMetrics();
    const scrape = async () => parseMetrics((await metrics.render()).body);
    const upstream = (samples: Awaited<ReturnType<typeof scrape>>, suffix: string, labels: Record<string, string> = {}) =>
      sampleValue(samples, `mcp_gateway_upstream_request_seconds_${suffix}`, { route: 'calc', status_class: '2xx', ...labels });
    metrics.upstream('calc', '2xx', 0.02);
    let samples = await scrape();
    expect(upstream(samples, 'count')).toBe(1);
    expect(upstream(samples, 'bucket', { le: '0.01' })).toBe(0);
    expect(upstream(samples, 'bucket', { le: '0.025' })).toBe(1);
    // Past one batch, with a scrape in between: nothing counted twice or lost.
    for (let index = 0; index < 700; index++) metrics.upstream('calc', '2xx', index < 300 ? 0.001 : 3);
    samples = await scrape();
    expect(upstream(samples, 'count')).toBe(701);
    expect(upstream(samples, 'bucket', { le: '0.005' })).toBe(300);
    expect(upstream(samples, 'bucket', { le: '2.5' })).toBe(301);
    expect(upstream(samples, 'sum')).toBeCloseTo(0.02 + 300 * 0.001 + 400 * 3, 6);
    for (let index = 0; index < 300; index++) metrics.authDecision('calc', 'jwt', 'accepted', 0.0005);
    samples = await scrape();
    expect(upstream(samples, 'count')).toBe(701);
    expect(sampleValue(samples, 'mcp_gateway_auth_decision_seconds_count', { route: 'calc', kind: 'jwt', result: 'accepted' })).toBe(300);
  });

  it('a value that is not a finite number is refused when observed, not in the middle of a later scrape', async () => {
    const metrics = createGatewayMetrics();
    expect(() => metrics.upstream('calc', '2xx', Number.NaN)).toThrow(TypeError);
    expect(() => metrics.authDecision('calc', 'jwt', 'accepted', Number.POSITIVE_INFINITY)).toThrow(TypeError);
    const samples = parseMetrics((await metrics.render()).body);
    expect(sampleValue(samples, 'mcp_gateway_upstream_request_seconds_count', { route: 'calc', status_class: '2xx' })).toBeUndefined();
  });
});

describe('requests_total series', () => {
  it('H1 client-chosen HTTP methods cannot grow the series: all but the known ones are `other`', async () => {
    const metrics = createGatewayMetrics();
    for (let i = 0; i < 500; i++) metrics.request('calc', `X-METHOD-${i}`, '4xx');
    const series = parseMetrics((await metrics.render()).body).filter((sample) => sample.name === 'mcp_gateway_requests_total');
    expect(series).toEqual([{ name: 'mcp_gateway_requests_total', labels: { route: 'calc', method: 'other', outcome: '4xx' }, value: 500 }]);
  });
});

describe('refusals and the shared cache', () => {
  it('refusals_total counts each refusal by route and error code', async () => {
    const metrics = createGatewayMetrics();
    metrics.refusal('calc', 'auth_unavailable');
    metrics.refusal('calc', 'auth_unavailable');
    metrics.refusal('calc', 'too_many_streams');
    metrics.refusal('unmatched', 'not_found');
    const samples = parseMetrics((await metrics.render()).body);
    expect(sampleValue(samples, 'mcp_gateway_refusals_total', { route: 'calc', code: 'auth_unavailable' })).toBe(2);
    expect(sampleValue(samples, 'mcp_gateway_refusals_total', { route: 'calc', code: 'too_many_streams' })).toBe(1);
    expect(sampleValue(samples, 'mcp_gateway_refusals_total', { route: 'unmatched', code: 'not_found' })).toBe(1);
  });

  it('cache_available reads the cache state at each scrape: 1 only when ready, one series for the backend', async () => {
    const metrics = createGatewayMetrics();
    const available = async () =>
      parseMetrics((await metrics.render()).body).filter((sample) => sample.name === 'mcp_gateway_cache_available');
    expect(await available()).toEqual([]);
    let state: 'ready' | 'connecting' | 'unavailable' = 'connecting';
    metrics.watchCache(() => ({ backend: 'redis', state, connectedOnce: true }));
    expect(await available()).toEqual([{ name: 'mcp_gateway_cache_available', labels: { backend: 'redis' }, value: 0 }]);
    state = 'ready';
    expect(await available()).toEqual([{ name: 'mcp_gateway_cache_available', labels: { backend: 'redis' }, value: 1 }]);
    state = 'unavailable';
    expect(await available()).toEqual([{ name: 'mcp_gateway_cache_available', labels: { backend: 'redis' }, value: 0 }]);
    metrics.watchCache(() => ({ backend: 'memory', state: 'ready' }));
    expect(await available()).toEqual([{ name: 'mcp_gateway_cache_available', labels: { backend: 'memory' }, value: 1 }]);
  });
});

describe('cache_evictions_total', () => {
  it('counts records the in-process store evicted, by kind, and starts every kind at 0', async () => {
    const metrics = createGatewayMetrics();
    const store = createMemoryStore({ bounds: { introspection_negative: 100 }, onEvict: metrics.cacheEviction });
    for (let index = 0; index < 150; index += 1) await store.set(`introspect:ns:${index}`, 'inactive', 60_000, { negative: true });
    await store.delete('introspect:ns:149');
    const samples = parseMetrics((await metrics.render()).body);
    expect(sampleValue(samples, 'mcp_gateway_cache_evictions_total', { kind: 'introspection_negative' })).toBe(50);
    expect(sampleValue(samples, 'mcp_gateway_cache_evictions_total', { kind: 'sessions' })).toBe(0);
    expect(sampleValue(samples, 'mcp_gateway_cache_evictions_total', { kind: 'grants' })).toBe(0);
  });
});
