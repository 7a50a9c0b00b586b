import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracerProvider } from '../../src/observability/tracing-sdk.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { compileOrThrow } from '../helpers/gateway.js';

/** A collector that refuses every export: the operator hears of it once, without the collector's answer. */

const COLLECTOR_ANSWER = 'collector-answer-canary';
let collector: Server;
let exports = 0;

beforeAll(async () => {
  collector = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports += 1;
      response.statusCode = 400;
      response.end(COLLECTOR_ANSWER);
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

describe('a failing export', () => {
  it('is logged as one warn line per minute at most, naming the setting to check and not the answer', async () => {
    const config = compileOrThrow(`
public_url: https://gw.example.test
telemetry: { traces: { otlp_endpoint: "http://127.0.0.1:${(collector.address() as AddressInfo).port}" } }
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    authorization_servers: [https://as.example.test]
    tokens: { jwt: { issuer: https://as.example.test } }
`);
    if (!config.telemetry.traces) throw new Error('telemetry.traces not compiled');
    const { logger, lines } = captureLogs();
    const provider = startTracerProvider(config.telemetry.traces, logger);
    try {
      for (let batch = 0; batch < 2; batch += 1) {
        trace.getTracer('test').startSpan('one').end();
        await provider.forceFlush().catch(() => undefined);
      }
    } finally {
      await provider.shutdown().catch(() => undefined);
    }
    expect(exports).toBe(2);
    const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40);
    expect(warnings.map((line) => line.msg)).toEqual(['tracing: spans could not be exported (check telemetry.traces.otlp_endpoint and the collector)']);
    expect(lines.join('')).not.toContain(COLLECTOR_ANSWER);
  });
});
