import { z } from 'zod';
import type { Milliseconds } from '../duration.js';
import { duration } from '../fields.js';

/** `shutdown`: how SIGTERM and SIGINT end the process. */

export const shutdownSchema = z
  .strictObject({
    grace_period: duration(
      '20s',
      'After SIGTERM/SIGINT: how long in-flight requests may take before remaining connections are cut.',
      { max: 600_000 },
    ),
  })
  .prefault({})
  .describe('Graceful shutdown.');

export interface ShutdownSettings {
  /** Longest wait for in-flight requests after SIGTERM/SIGINT before connections are cut. */
  readonly gracePeriod: Milliseconds;
}

export function compileShutdown(raw: z.output<typeof shutdownSchema>): ShutdownSettings {
  return { gracePeriod: raw.grace_period };
}
