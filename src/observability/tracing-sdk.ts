import { tracingChannel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { context, diag, DiagLogLevel, propagation, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ExportResultCode } from '@opentelemetry/core';
import type { Logger } from 'pino';
import type { TracesSettings } from '../config/types.js';

/**
 * The OpenTelemetry SDK, loaded only when `telemetry.traces` is set (src/gateway/tracing.ts imports this module
 * lazily: with tracing off not one of these packages is loaded). It registers the global tracer provider, the
 * AsyncLocalStorage context manager and the W3C Trace Context propagator, and the instrumentations of the calls the
 * gateway makes: undici (the upstream call, JWKS, introspection, token endpoints: Node's fetch and the undici package
 * both report on diagnostics channels) and ioredis (see `traceRedisCommands`).
 */

const SERVICE_NAME = 'mcp-auth-gateway';

/** The name of the gateway's own tracer (the MCP message's span, Redis commands). */
export const TRACER_NAME = SERVICE_NAME;

export interface TracerHandle {
  /** Sends what is buffered; resolves when the collector answered (or the export gave up). */
  forceFlush(): Promise<void>;
  /** Flushes, then stops the instrumentations and the exporter. */
  shutdown(): Promise<void>;
}

/** The gateway's version, as its package.json says (two levels above this file in src/ and in dist/). */
function serviceVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

const noop = (): void => undefined;

/** A URL's query is the caller's, and may carry a credential meant for the upstream: never recorded. */
function withoutQuery(origin: string, path: string): Record<string, string> {
  const queryStart = path.indexOf('?');
  if (queryStart === -1) return {};
  return { 'url.full': `${origin}${path.slice(0, queryStart)}?REDACTED`, 'url.query': 'REDACTED' };
}

/** How often at most each kind of trouble is logged: a collector that is down would otherwise add a line per batch. */
const TROUBLE_LOG_INTERVAL_MS = 60_000;

/**
 * A warn line with `message`, once a minute at most. `otel` is the SDK's own message, never its error objects (they
 * may carry the collector's answer).
 */
function troubleReporter(logger: Logger, message: string): (otel: string) => void {
  let lastLoggedAt = Number.NEGATIVE_INFINITY;
  return (otel) => {
    const now = performance.now();
    if (now - lastLoggedAt < TROUBLE_LOG_INTERVAL_MS) return;
    lastLoggedAt = now;
    logger.warn({ otel }, message);
  };
}

/** The OTLP exporter, telling `report` of every export that failed. */
function reportingFailures(exporter: SpanExporter, report: (otel: string) => void): SpanExporter {
  return {
    export: (spans, resultCallback) =>
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) report('export failed');
        resultCallback(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

export function startTracerProvider(settings: TracesSettings, logger: Logger): TracerHandle {
  const exportFailed = troubleReporter(logger, 'tracing: spans could not be exported (check telemetry.traces.otlp_endpoint and the collector)');
  const sdkWarning = troubleReporter(logger, 'tracing: the OpenTelemetry SDK reported a problem (e.g. spans dropped from a full queue)');
  // Only the first argument, the SDK's message.
  diag.setLogger({ error: sdkWarning, warn: sdkWarning, info: noop, debug: noop, verbose: noop }, DiagLogLevel.WARN);
  const exporter = new OTLPTraceExporter({
    url: settings.endpoint.href,
    // Read at each export, so the values never sit in the exporter's own configuration.
    headers: () => Promise.resolve(Object.fromEntries([...settings.headers].map(([name, value]) => [name, value.reveal()]))),
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME, 'service.version': serviceVersion() }),
    // A caller's sampled flag decides for its trace; new traces are sampled at `sample_ratio`.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(reportingFailures(exporter, exportFailed))],
  });
  provider.register();
  const undici = new UndiciInstrumentation({
    startSpanHook: (request) => withoutQuery(request.origin, request.path),
  });
  const redis = traceRedisCommands(trace.getTracer(TRACER_NAME));
  return {
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      undici.disable();
      redis.unsubscribe();
      await provider.shutdown();
      // The global provider, context manager and propagator, so a later start (tests) can register its own.
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}

/** What ioredis publishes on `ioredis:command` (its built/tracing.js), of which only the non-sensitive part is read. */
interface RedisCommandMessage {
  readonly command: string;
  readonly database?: number;
  readonly serverAddress?: string;
  readonly serverPort?: number;
  span?: Span;
}

/**
 * A CLIENT span per Redis command. @opentelemetry/instrumentation-ioredis patches ioredis through a require hook,
 * which cannot reach a CommonJS package imported by an ES module before the SDK was loaded (ioredis is loaded at
 * start, the SDK only once the config asks for it); ioredis 5.11 publishes every command on its own
 * diagnostics_channel TracingChannel instead, and this one subscriber covers every command of every client. The
 * span names the command, never its arguments (keys and values are the gateway's records).
 */
function traceRedisCommands(tracer: Tracer): { unsubscribe(): void } {
  const channel = tracingChannel<unknown, RedisCommandMessage>('ioredis:command');
  const handlers = {
    start(message: RedisCommandMessage) {
      const operation = message.command.toUpperCase();
      message.span = tracer.startSpan(operation, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'redis',
          'db.operation.name': operation,
          ...(message.database !== undefined && { 'db.namespace': String(message.database) }),
          ...(message.serverAddress !== undefined && { 'server.address': message.serverAddress }),
          ...(message.serverPort !== undefined && { 'server.port': message.serverPort }),
        },
      });
    },
    error(message: RedisCommandMessage & { error?: unknown }) {
      // The error's name only: a Redis reply error can quote what it was sent.
      const name = message.error instanceof Error ? message.error.name : 'Error';
      message.span?.setStatus({ code: SpanStatusCode.ERROR, message: name });
    },
    asyncEnd(message: RedisCommandMessage) {
      message.span?.end();
    },
    end: () => undefined,
    asyncStart: () => undefined,
  };
  channel.subscribe(handlers);
  return { unsubscribe: () => channel.unsubscribe(handlers) };
}
