import { z } from 'zod';
import { bindHost, listenerPort } from '../fields.js';

/** `admin`: the listener for /metrics (only here) and /healthz, /readyz (on the main listener too). */

export const adminSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Serve the admin listener. Default: true.'),
    host: bindHost('127.0.0.1', 'Bind address; keep it off public interfaces (metrics are unauthenticated).'),
    port: listenerPort(9090),
  })
  .prefault({})
  .describe('Admin listener: /metrics (Prometheus; never served on the main listener), and /healthz and /readyz (also served on the main listener).');

/** The admin listener (metrics, health); never the main listener. */
export interface AdminSettings {
  readonly enabled: boolean;
  readonly host: string;
  readonly port: number;
}

export function compileAdmin(raw: z.output<typeof adminSchema>): AdminSettings {
  return { enabled: raw.enabled, host: raw.host, port: raw.port };
}
