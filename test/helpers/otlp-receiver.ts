import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute as OTLP/JSON carries it (one of the typed value fields). */
interface OtlpAttribute {
  readonly key: string;
  readonly value: { readonly stringValue?: string; readonly intValue?: number | string; readonly boolValue?: boolean; readonly doubleValue?: number };
}

/** One span of an OTLP/JSON export (ExportTraceServiceRequest), ids in hex as OTLP/JSON writes them. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly events: readonly string[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly resource: Readonly<Record<string, string | number | boolean | undefined>>;
}

export interface OtlpReceiver {
  /** Base URL (the gateway appends /v1/traces). */
  readonly url: string;
  /** Every export request as it arrived: its headers and the raw body text. */
  readonly exports: { readonly path: string; readonly headers: IncomingHttpHeaders; readonly body: string }[];
  /** Every span received so far, decoded. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

function flatten(attributes: readonly OtlpAttribute[] | undefined): Record<string, string | number | boolean | undefined> {
  const flat: Record<string, string | number | boolean | undefined> = {};
  for (const { key, value } of attributes ?? []) {
    flat[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue;
  }
  return flat;
}

interface ExportBody {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly OtlpAttribute[] };
    readonly scopeSpans?: readonly {
      readonly spans?: readonly {
        readonly traceId: string;
        readonly spanId: string;
        readonly parentSpanId?: string;
        readonly name: string;
        readonly kind: number;
        readonly attributes?: readonly OtlpAttribute[];
        readonly events?: readonly { readonly name: string }[];
        readonly links?: readonly { readonly traceId: string; readonly spanId: string }[];
      }[];
    }[];
  }[];
}

/** A real OTLP/HTTP collector endpoint on port 0 that accepts JSON exports and decodes them. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: OtlpReceiver['exports'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.setHeader('content-type', 'application/json');
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans: () =>
      exports.flatMap(({ body }) =>
        ((JSON.parse(body) as ExportBody).resourceSpans ?? []).flatMap((resourceSpans) => {
          const resource = flatten(resourceSpans.resource?.attributes);
          return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
            (scope.spans ?? []).map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              attributes: flatten(span.attributes),
              events: (span.events ?? []).map((event) => event.name),
              links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
              resource,
            })),
          );
        }),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
