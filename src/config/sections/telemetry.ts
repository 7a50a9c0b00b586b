import { z } from 'zod';
import type { ValueAt } from '../problem.js';
import { rule, secret } from '../fields.js';
import { HEADER_NAME_PATTERN, headerValueProblem } from '../rules.js';
import { Secret } from '../secret.js';
import { isInsecureHttp, urlProblem } from '../url.js';

/** `telemetry`: what the gateway exports beyond its metrics and logs (OpenTelemetry traces). */

/** The OTLP/HTTP path of traces, appended to an endpoint given without a path (like OTEL_EXPORTER_OTLP_ENDPOINT). */
export const OTLP_TRACES_PATH = '/v1/traces';

const tracesSchema = z
  .strictObject({
    otlp_endpoint: z
      .string()
      .superRefine(rule((value: string) => urlProblem(value, { blockInternalHosts: false, requireNormalForm: false })))
      .meta({ format: 'uri' })
      .describe(
        `The collector's OTLP/HTTP endpoint (JSON encoding): http(s)://collector:4318 gets ${OTLP_TRACES_PATH} appended (like OTEL_EXPORTER_OTLP_ENDPOINT); a URL with a path is used as is (like OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Required.`,
      ),
    sample_ratio: z
      .number()
      .min(0, { error: 'must be between 0 and 1' })
      .max(1, { error: 'must be between 0 and 1' })
      .default(1)
      .describe(
        'Share of new traces recorded (0 to 1). A request whose caller sent a traceparent follows the caller\'s sampled flag instead, so a trace is recorded whole or not at all. Default: 1.',
      ),
    headers: z
      .record(
        z.string().regex(HEADER_NAME_PATTERN, { error: 'must be an HTTP header name (RFC 9110 token characters)' }),
        secret('A header value sent with every export (an API key, Authorization).').superRefine(rule(headerValueProblem)),
      )
      .default({})
      .describe('Headers sent with every export, e.g. the collector\'s API key. Their values are secrets. Default: none.'),
  })
  .optional()
  .describe('OpenTelemetry traces: a span per MCP request with the decision\'s steps, and child spans for every call it makes. Off unless set; read at start (a change needs a restart).');

export const telemetrySchema = z
  .strictObject({ traces: tracesSchema })
  .prefault({})
  .describe('Telemetry beyond metrics and logs.');

type RawTelemetry = z.output<typeof telemetrySchema>;

export interface TracesSettings {
  /** Where spans are POSTed (OTLP/HTTP, JSON). */
  readonly endpoint: URL;
  readonly sampleRatio: number;
  /** Sent with every export. */
  readonly headers: ReadonlyMap<string, Secret>;
}

export interface TelemetrySettings {
  /** Absent unless `telemetry.traces` is set: then no tracing code is even loaded. */
  readonly traces: TracesSettings | undefined;
}

export function compileTelemetry(raw: RawTelemetry): TelemetrySettings {
  const { traces } = raw;
  if (!traces) return { traces: undefined };
  const endpoint = new URL(traces.otlp_endpoint);
  if (endpoint.pathname === '/') endpoint.pathname = OTLP_TRACES_PATH;
  return {
    traces: {
      endpoint,
      sampleRatio: traces.sample_ratio,
      headers: new Map(Object.entries(traces.headers).map(([name, value]) => [name.toLowerCase(), new Secret(value)])),
    },
  };
}

/** The export headers' values, for the literal-secret warning. */
export function telemetrySecrets(raw: RawTelemetry): ValueAt[] {
  return Object.entries(raw.traces?.headers ?? {}).map(([name, value]) => [`telemetry.traces.headers.${name}`, value]);
}

/** Export headers (an API key) sent in clear over the network. */
export function telemetryWarnings(raw: RawTelemetry): string[] {
  const traces = raw.traces;
  if (!traces || Object.keys(traces.headers).length === 0 || !isInsecureHttp(traces.otlp_endpoint)) return [];
  return ['telemetry.traces.otlp_endpoint: plain http to a remote host sends telemetry.traces.headers in clear; use https'];
}
