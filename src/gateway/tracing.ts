import type { Logger } from 'pino';
import type { TracesSettings } from '../config/types.js';
import type { DoorTracing } from '../doors/shared/tracing.js';
import type { AuditPrincipal } from '../observability/audit.js';
import type { TracerHandle } from '../observability/tracing-sdk.js';

/** Tracing as the wiring root hands it out: the SDK's handle, and the doors' part once the key of callers' hashes is known. */
export interface GatewayTracing {
  readonly provider: TracerHandle;
  /** The doors' span handling, naming callers by `principalOf` (a keyed hash). */
  readonly forDoors: (principalOf: AuditPrincipal) => DoorTracing;
}

/**
 * Loads the OpenTelemetry SDK and the doors' instrumentation, and registers the global tracer provider. Imported
 * here, on demand, and nowhere statically: with `telemetry.traces` unset none of those packages is loaded, so
 * tracing off costs nothing (bench/README.md).
 */
export async function startTracing(settings: TracesSettings, logger: Logger): Promise<GatewayTracing> {
  const [{ startTracerProvider }, { createDoorTracing }] = await Promise.all([
    import('../observability/tracing-sdk.js'),
    import('../doors/shared/tracing.js'),
  ]);
  logger.info({ otlp_endpoint: settings.endpoint.origin, sample_ratio: settings.sampleRatio }, 'tracing: exporting spans over OTLP/HTTP');
  return { provider: startTracerProvider(settings, logger), forDoors: createDoorTracing };
}
